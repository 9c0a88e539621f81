# iris-run's process guard: stops what a job's ranks leave running once the launcher that started
# them is gone without cleaning up, whatever ended it (SIGKILL included). The launcher holds this
# shell's stdin open for the life of the job; the kernel closes it when the launcher dies, however
# it dies. Run by dev.irisjvm.launch.ProcessGuard (as sh -c 'eval "$IRIS_RUN_GUARD_SCRIPT"'),
# whose Javadoc explains the design.
#
# Arguments: GRACE_MS SESSIONS RANK...
#   GRACE_MS  how long the job's processes get between SIGTERM and SIGKILL
#   SESSIONS  1 when each rank leads a session of its own (started through setsid), else 0
#   RANK...   this node's global ranks, the IRIS_RANK values its processes carry
# Input from the launcher, one line each:
#   token T   the job token that every process of the job inherits as IRIS_JOB_TOKEN
#   pid P     a rank was started as process P (the id of its session when SESSIONS is 1)
#   done      the job ended and the launcher cleaned up after it: exit without doing anything
# End of input before "done" means the launcher died: SIGTERM to every process of the job, and
# SIGKILL to whatever still runs GRACE_MS later. No wait here is unbounded.

# Ctrl-C and hangups are for the launcher, which this guard outlives; a closed stderr must not
# kill it half way.
trap '' INT HUP PIPE
unset IRIS_RUN_GUARD_SCRIPT  # read already; the guard's own children need not carry it

grace_ms=$1 sessions=$2
shift 2
ranks=
for r in "$@"; do ranks=${ranks:+$ranks|}$r; done
launcher=$PPID
token= pids=
while read -r word value; do
  case $word in
    token) token=$value ;;
    pid) pids="$pids $value" ;;
    done) exit 0 ;;
  esac
done

# $1: a /proc/PID/stat line after the command name (state ppid pgrp session ...). True when the
# process runs (is no zombie) in the session of one of the ranks.
in_rank_session() {
  set -- $1
  [ "$1" != Z ] && [ "$1" != X ] || return 1
  case " $pids " in *" $4 "*) return 0 ;; esac
  return 1
}

# Prints the job's running processes, one pid a line: the members of the ranks' sessions (their
# children and grandchildren, detached ones included), processes that carry the job token and one
# of this node's ranks (those that left the session), and, without /proc, the ranks themselves.
job_processes() {
  if [ ! -r /proc/self/stat ]; then
    for p in $pids; do kill -0 "$p" 2>/dev/null && echo "$p"; done
    return 0
  fi
  if [ "$sessions" = 1 ] && [ -n "$pids" ]; then
    for f in /proc/[0-9]*/stat; do
      { read -r stat < "$f"; } 2>/dev/null || continue
      in_rank_session "${stat##*) }" || continue
      p=${f#/proc/}
      echo "${p%/stat}"
    done
  fi
  if [ -n "$token" ] && [ -n "$ranks" ]; then
    carriers=$(grep -lzxF "IRIS_JOB_TOKEN=$token" /proc/[0-9]*/environ 2>/dev/null)
    [ -n "$carriers" ] || return 0
    for f in $(grep -lzxE "IRIS_RANK=($ranks)" $carriers 2>/dev/null); do
      p=${f#/proc/}
      echo "${p%/environ}"
    done
  fi
  return 0
}

# SIGTERM to each process of the job not signalled before; false once none runs.
signalled=
term_new() {
  found=$(job_processes)
  [ -n "$found" ] || return 1
  for p in $found; do
    case " $signalled " in
      *" $p "*) ;;
      *) kill -TERM "$p" 2>/dev/null; signalled="$signalled $p" ;;
    esac
  done
  return 0
}

term_new || exit 0
echo "iris-run: the launcher (pid $launcher) ended without cleaning up; stopping the processes its ranks left:$signalled" >&2
waited=0
while [ "$waited" -lt "$grace_ms" ]; do
  sleep 0.1
  waited=$((waited + 100))
  term_new || exit 0
done
left=$(job_processes)
if [ -n "$left" ]; then
  kill -KILL $left 2>/dev/null
  echo "iris-run: killed (SIGKILL) what outlasted SIGTERM by" "$grace_ms" "ms:" $left >&2
fi
exit 0
