// tally tracker: https://github.com/tally-analytics/tally
// <script defer data-site="SITE_ID" src="https://HOST/js/tally.js"></script>
// analytics('event', 'Signup', {props: {plan: 'pro'}, revenue: {amount: 49, currency: 'USD'}})
// How far each page is scrolled is reported when it is hidden or left.
//
// Served minified (tracker.go): at most ECMAScript 2015.
(function (w, d) {
  'use strict';
  var s = d.currentScript, site, api, hash, vid, ref = d.referrer, queued, last, outbound, files, manual, here,
    page, seen, height, sent;
  function noop() {}
  function store(k, v) {
    try { if (v === undefined) return w.localStorage.getItem(k); w.localStorage.setItem(k, v); } catch (e) {}
  }
  function cookie(k, v) {
    try {
      if (v === undefined) { var m = d.cookie.match(new RegExp('(?:^|; )' + k + '=([^;]*)')); return m && m[1]; }
      d.cookie = k + '=' + v + ';path=/;max-age=31536000;SameSite=Lax';
    } catch (e) {}
  }
  function visitor() {
    var v = store('analytics_vid') || cookie('analytics_vid');
    if (!v) {
      var a = new Uint8Array(16);
      try { w.crypto.getRandomValues(a); } catch (e) { for (var i = 0; i < 16; i++) a[i] = Math.random() * 256; }
      v = Array.prototype.map.call(a, function (b) { return (b + 256).toString(16).slice(1); }).join('');
    }
    store('analytics_vid', v);
    cookie('analytics_vid', v);
    // none if not kept (the server's daily hash then)
    return store('analytics_vid') || cookie('analytics_vid') || undefined;
  }
  function off() {
    return store('tally_ignore') === 'true' ||
      (/^(localhost|127\.0\.0\.1|\[::1\])$/.test(w.location.hostname) && !s.hasAttribute('data-allow-localhost'));
  }
  // the deepest the page has been seen (its top to the window's bottom) and its height, in pixels;
  // NaN until its pageview
  function measure() {
    height = d.scrollingElement.scrollHeight;
    seen = Math.max(seen, w.innerHeight + w.scrollY);
  }
  // the page's scroll depth, in percent, if deeper than reported (never before a pageview, or a
  // measure: NaN); hidden: the page is still shown, measured once more (a page left for an app's
  // next one may be drawn over already)
  function engaged(hidden) {
    if (hidden) measure();
    var p = Math.min(100, Math.round(seen / height * 100));
    if (p > sent) send('engagement', { url: page }, sent = p);
  }
  function send(name, opts, depth) {
    try {
      if (!site || off()) return;
      // kept only for a browser that sends
      vid = vid || visitor();
      // a call may name its page (a path, or a URL on the site): /users/:id for /users/42; with
      // data-manual, events are on the page the last pageview named
      var b = { site_id: site, event_name: name, referrer: ref || undefined, visitor_id: vid, hash_routes: hash || undefined,
        url: opts && opts.url ? new URL(opts.url, w.location.href).href : (name != 'pageview' && manual && here) || w.location.href };
      if (depth) b.scroll_depth = depth;
      else if (name === 'pageview') {
        // the page left first; then the next page's referrer, and the page of the events after it
        engaged();
        page = b.url;
        seen = height = sent = 0;
        requestAnimationFrame(measure);
        ref = here = b.url;
        var q = new URLSearchParams(w.location.search), cs = q.get('session_id') || q.get('checkout_session_id');
        // a page's own session_id, not a checkout's
        if (!/^[\x21-\x7e]{1,255}$/.test(cs)) cs = null;
        b.checkout_session_id = cs || undefined;
      } else if (opts) {
        var r = opts.revenue;
        b.props = opts.props;
        // 49.99 + 5.99 = 55.980000000000004
        b.revenue = r && typeof r.amount == 'number' ? { amount: +r.amount.toPrecision(15), currency: r.currency } : r;
      }
      var body = JSON.stringify(b);
      if (w.navigator.sendBeacon && w.navigator.sendBeacon(api, new Blob([body], { type: 'text/plain' }))) return;
      w.fetch(api, { method: 'POST', body: body, keepalive: true, headers: { 'Content-Type': 'text/plain' } }).catch(noop);
    } catch (e) {}
  }
  // path and hash route, cut as the server cuts them
  function at() {
    var r = hash ? w.location.hash.slice(1).split('?')[0] : '', i = r.indexOf('=');
    if (i >= 0) r = r.slice(0, Math.max(r.lastIndexOf('/', i), 0));
    if (/^!?\/?$/.test(r)) r = '';
    return w.location.pathname + (r && '#' + r);
  }
  function pageview() {
    if (last === at() + w.location.search) return;
    last = at() + w.location.search;
    send('pageview');
  }
  // a click on an element tagged data-tally-event, on a link to a file or
  // to another site; a link's query and fragment are never sent
  function click(e) {
    // the main button's click, or a middle-click's auxclick (a new tab)
    if (e.button > 1) return;
    var t = e.target, tag, a, p = {}, x;
    for (; t && t.getAttribute; t = t.parentNode) {
      tag = tag || (t.getAttribute('data-tally-event') && t);
      a = a || (t.tagName == 'A' && /^https?:$/.test(t.protocol) && t);
    }
    // a middle-click opens a link, and activates nothing else; a tagged
    // link counts as its tag only, not also as an outbound link or a file
    if (tag) {
      if (a || !e.button) {
        [].forEach.call(tag.attributes, function (x) {
          if (!x.name.indexOf('data-tally-event-')) p[x.name.slice(17)] = x.value;
        });
        send(tag.getAttribute('data-tally-event'), { props: p });
      }
      return;
    }
    if (!a) return;
    x = { props: { url: a.origin + a.pathname } };
    if (files && (a.hasAttribute('download') || files.indexOf(a.pathname.split('.').pop().toLowerCase()) >= 0))
      send('File Download', x);
    else if (outbound && a.host != w.location.host) send('Outbound Link: Click', x);
  }
  function analytics(cmd, name, opts) {
    if (cmd === 'event' && typeof name === 'string') send(name, opts);
    // analytics('pageview', {url: '/users/:id'})
    if (cmd === 'pageview') send(cmd, name);
  }
  try {
    if (!s) return;
    site = s.getAttribute('data-site');
    // a site's script included twice counts once
    var on = analytics.on = (w.tally && w.tally.on) || {};
    if (on[site]) return;
    on[site] = 1;
    hash = s.hasAttribute('data-hash');
    api = s.getAttribute('data-api') || new URL(s.src).origin + '/e';
    outbound = s.hasAttribute('data-outbound-links');
    files = s.getAttribute('data-file-downloads');
    files = files != null && (files || 'pdf,xlsx,docx,pptx,ppt,pps,key,txt,rtf,csv,zip,rar,7z,gz,dmg,pkg,exe,msi,apk,mp3,wav,wma,midi,mp4,mov,avi,wmv,mpeg')
      .toLowerCase().match(/\w+/g);
    manual = s.hasAttribute('data-manual');
    queued = (w.analytics && w.analytics.q) || [];
    // unless another tool's (Segment's) is there
    if (!w.analytics || typeof w.analytics == 'function') w.analytics = analytics;
    w.tally = analytics;
    // a replaced entry counts if its path changes; with data-manual, the
    // site sends every pageview itself
    if (!manual) {
      ['pushState', 'replaceState'].forEach(function (m) {
        var f = w.history[m];
        w.history[m] = function () {
          var p = at(), r = f.apply(this, arguments);
          if (m == 'pushState' || p != at()) pageview();
          return r;
        };
      });
      w.addEventListener('popstate', pageview);
      if (hash) w.addEventListener('hashchange', pageview);
    }
    // scroll events come once a frame at most; a page leaving is sure to see visibilitychange
    w.addEventListener('scroll', measure);
    d.addEventListener('visibilitychange', function () { if (d.hidden) engaged(1); });
    d.addEventListener('click', click, true);
    d.addEventListener('auxclick', click, true);
    // a form sent (the browser's checks passed), on its page
    if (s.hasAttribute('data-form-submissions'))
      d.addEventListener('submit', function () {
        send('Form: Submission', { props: { path: manual && here ? new URL(here).pathname : at() } });
      }, true);
    var start = function () {
      if (!manual) pageview();
      for (var i = 0; i < queued.length; i++) analytics.apply(null, queued[i]);
    };
    // a prerendered page counts once shown
    if (d.prerendering) d.addEventListener('prerenderingchange', start, { once: true });
    else start();
  } catch (e) {}
})(window, document);
