// tally dashboard: loads each report card from its own URL (three at a
// time), switches a card's tabs and sends its forms in place, refreshes live
// cards, sizes row bars, copies snippets. No dependencies; without it every card is a link.
(function () {
  'use strict';

  function sizeBars(root) {
    root.querySelectorAll('.bar[data-w]').forEach(function (el) {
      el.style.setProperty('--w', el.getAttribute('data-w') + '%');
    });
  }

  // A card whose table is wider than it scrolls sideways: it is then a
  // keyboard stop (its arrow keys scroll it) and shows shadows at the edges
  // that hide more; a card that fits is neither.
  function fit(card) {
    var wide = card.scrollWidth > card.clientWidth;
    card.classList.toggle('scrolls', wide);
    if (wide) { card.setAttribute('tabindex', '0'); } else { card.removeAttribute('tabindex'); }
  }
  function fitAll() { document.querySelectorAll('section.card').forEach(fit); }

  function load(body, url) {
    body.setAttribute('aria-busy', 'true');
    return fetch(url, { headers: { 'X-Tally-Card': '1' }, credentials: 'same-origin' })
      .then(function (res) {
        return res.text().then(function (html) {
          if (res.redirected || res.url.indexOf('/login') >= 0) {
            window.location.reload();
            return;
          }
          body.innerHTML = html;
          body.setAttribute('data-loaded', url);
          sizeBars(body);
          var card = body.closest('section.card');
          if (card) { fit(card); }
        });
      })
      .catch(function () {
        body.innerHTML = '<p class="card-error" role="alert">This report could not be loaded. <a href="' + url + '">Try again</a>.</p>';
      })
      .finally(function () { body.removeAttribute('aria-busy'); });
  }

  // The first load of the cards goes a few at a time, in page order: the
  // server answers each sooner than if all of them competed for its cores,
  // and the top of the page fills first. A card marked data-first (one that
  // takes longer, such as the funnel) starts at once, beside the top.
  var queue = [], firsts = 0, running = 0, parallel = 3;
  function pump() {
    while (running < parallel && queue.length > 0) {
      var job = queue.shift();
      running++;
      load(job.body, job.url).finally(function () { running--; pump(); });
    }
  }

  function start() {
    document.querySelectorAll('[data-card]').forEach(function (body) {
      var url = body.getAttribute('data-card');
      if (body.hasAttribute('data-first')) {
        queue.splice(firsts++, 0, { body: body, url: url });
      } else {
        queue.push({ body: body, url: url });
      }
      var every = parseInt(body.getAttribute('data-refresh') || '0', 10);
      if (every > 0) {
        setInterval(function () {
          if (!document.hidden) { load(body, body.getAttribute('data-loaded') || url); }
        }, every * 1000);
      }
      // a card's form (the journeys' pages) loads its answer in place;
      // fields left empty are no parameters
      body.addEventListener('submit', function (ev) {
        var form = ev.target.closest('form[data-card-form]');
        if (!form) { return; }
        ev.preventDefault();
        var q = new URLSearchParams();
        new FormData(form).forEach(function (v, k) { if (v !== '') { q.append(k, v); } });
        load(body, form.getAttribute('action') + '?' + q.toString()).then(function () {
          var field = body.querySelector('[aria-invalid="true"]') || body.querySelector('form[data-card-form] input:not([type=hidden])');
          if (field) { field.focus(); }
        });
      });
      body.addEventListener('click', function (ev) {
        var a = ev.target.closest('a[data-tab]');
        if (!a) { return; }
        ev.preventDefault();
        var label = a.textContent;
        load(body, a.getAttribute('href')).then(function () {
          // the tab now current, or else the link clicked, as it is now (a
          // chosen chart's metric goes back to the first chart)
          var active = body.querySelector('a[data-tab][aria-current]') ||
            Array.prototype.filter.call(body.querySelectorAll('a[data-tab]'), function (x) { return x.textContent === label; })[0];
          if (active) { active.focus(); }
        });
      });
    });
    document.querySelectorAll('[data-copy]').forEach(function (btn) {
      btn.addEventListener('click', function () {
        var text = document.getElementById(btn.getAttribute('data-copy')).textContent;
        navigator.clipboard.writeText(text).then(function () {
          btn.textContent = 'Copied';
          setTimeout(function () { btn.textContent = 'Copy'; }, 2000);
        });
      });
    });
    sizeBars(document);
    fitAll();
    var fitting = false;
    window.addEventListener('resize', function () {
      if (fitting) { return; }
      fitting = true;
      requestAnimationFrame(function () { fitting = false; fitAll(); });
    });
    pump();
  }

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', start);
  } else {
    start();
  }
})();
