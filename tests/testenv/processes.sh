# shellcheck shell=bash
# Process groups with pid files, free ports and waiting, for the scripts that start servers
# under a state folder (tests/testenv/testenv.sh, tests/vpa-live/vpa-live.sh). Source it after
# defining log MESSAGE and die MESSAGE; the functions use $DIR (pid files in DIR/run, logs in
# DIR/logs) and $WAIT_TIMEOUT (seconds, for wait_for; 120 if unset).

# ---------------------------------------------------------------- processes

# The start time of a process (field 22 of /proc/PID/stat), so that a pid file never
# makes us signal an unrelated process that got the same pid later.
proc_start() { awk '{print $22}' "/proc/$1/stat" 2>/dev/null || true; }

# alive NAME: the recorded process of NAME still runs
alive() {
    local f=$DIR/run/$1.pid pid start
    [[ -f $f ]] || return 1
    read -r pid start <"$f" || return 1
    [[ -n $pid && -d /proc/$pid && "$(proc_start "$pid")" == "$start" ]] || return 1
    # A zombie (exited, not yet reaped) does not count.
    [[ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ]]
}

# launch NAME CMD...: run CMD in a session (and process group) of its own, output to
# DIR/logs/NAME.log, and record its pid.
launch() {
    local name=$1; shift
    setsid "$@" >>"$DIR/logs/$name.log" 2>&1 </dev/null &
    local pid=$!
    echo "$pid $(proc_start "$pid")" >"$DIR/run/$name.pid"
}

# stop_components NAME...: stop_one each NAME, the last first, and fail naming whatever still
# runs after that.
stop_components() {
    local c left=() i
    for ((i = $#; i >= 1; i--)); do
        stop_one "${!i}"
    done
    for c in "$@"; do
        ! alive "$c" || left+=("$c")
    done
    ((${#left[@]} == 0)) || die "still running after stop: ${left[*]}"
}

# report_status NAME [WANTED]: says whether NAME runs; fails when it does not and WANTED is 1
# (the default); a NAME not wanted is only named when it runs.
report_status() {
    local name=$1 wanted=${2:-1}
    if alive "$name"; then
        echo "$name: running (pid $(cut -d' ' -f1 "$DIR/run/$name.pid"))"
    elif ((wanted)); then
        echo "$name: not running"
        return 1
    fi
}

# usage: the calling script's header comment (up to `set -euo`) as its help, on stderr; exit 2.
usage() {
    sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//' >&2
    exit 2
}

# pid_exports PREFIX NAME...: `export PREFIX_PID_<NAME>=<pid>` lines for an env file (an empty
# pid for a NAME not running); NAME upper-cased, dashes as underscores.
pid_exports() {
    local prefix=$1 name pid start; shift
    for name in "$@"; do
        pid=
        [[ ! -f $DIR/run/$name.pid ]] || read -r pid start <"$DIR/run/$name.pid"
        echo "export ${prefix}_PID_$(echo "${name//-/_}" | tr '[:lower:]' '[:upper:]')=${pid}"
    done
}

# stop_one NAME [SIGNAL]: SIGNAL (TERM) to the process group, SIGKILL after 15 s.
stop_one() {
    local name=$1 sig=${2:-TERM} pid start i
    alive "$name" || { rm -f "$DIR/run/$name.pid"; return 0; }
    read -r pid start <"$DIR/run/$name.pid"
    kill "-$sig" -- "-$pid" 2>/dev/null || kill "-$sig" "$pid" 2>/dev/null || true
    for ((i = 0; i < 150; i++)); do
        alive "$name" || break
        sleep 0.1
    done
    if alive "$name"; then
        log "$name did not stop in 15 s, killing it"
        kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
        for ((i = 0; i < 50; i++)); do alive "$name" || break; sleep 0.1; done
    fi
    # Anything left in its process group (children that outlived it).
    if pgrep -g "$pid" >/dev/null 2>&1; then
        kill -KILL -- "-$pid" 2>/dev/null || true
    fi
    rm -f "$DIR/run/$name.pid"
}

# ---------------------------------------------------------------- ports

# free_port VAR: set VAR to a TCP port that nothing listens on, below the ephemeral
# range, and not handed out before by this script. Another program can still take it
# before our server binds it: cmd_start then tries again with other ports.
declare -A taken_ports=()
free_port() {
    local p i
    for ((i = 0; i < 200; i++)); do
        p=$((10000 + RANDOM % 22000))
        [[ -z ${taken_ports[$p]:-} ]] || continue
        if ! ss -Htan "( sport = :$p )" 2>/dev/null | grep -q .; then
            taken_ports[$p]=1
            printf -v "$1" '%s' "$p"
            return 0
        fi
    done
    die "no free port found"
}

# ---------------------------------------------------------------- waiting

# wait_for WHAT NAME CMD...: run CMD until it succeeds, while component NAME runs.
wait_for() {
    local what=$1 name=$2; shift 2
    local deadline=$((SECONDS + ${WAIT_TIMEOUT:-120}))
    until "$@" >/dev/null 2>&1; do
        if [[ -n $name ]] && ! alive "$name"; then
            log "$name exited while waiting for $what; last lines of logs/$name.log:"
            tail -n 30 "$DIR/logs/$name.log" >&2 || true
            return 1
        fi
        if ((SECONDS > deadline)); then
            log "timed out waiting for $what"
            [[ -z $name ]] || tail -n 30 "$DIR/logs/$name.log" >&2 || true
            return 1
        fi
        sleep 0.2
    done
}
