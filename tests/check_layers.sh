#!/bin/sh
# check_layers.sh BUILD — run by `make test`, from the library's objects:
#  1. every external symbol libtl.a defines starts with tl (tlrt_ in src/lang/rt/, the
#     run time compiled programs call, and only there), so none collides with a
#     program's own when libtl.a is linked into it;
#  2. the language's stages call one way (src/lang: front <- check <- gen; rt calls
#     nothing of the compiler): an object of a stage references no symbol defined by a
#     later stage or by the driver, and gen references of check only types.o (the
#     checked tree's types): the generator reads the checker's notes, never calls it;
#  3. the same for includes: front includes nothing of check/, gen/, rt/ or the driver;
#     check nothing of gen/, rt/ or the driver; rt nothing of the compiler; gen, of
#     check/, only types.h.
# Prints each violation; exits 1 if there is one.
set -u
B=${1:-build}
O=$B/obj/src
fail=0
say() { echo "check_layers: $*"; fail=1; }

[ -f "$B/libtl.a" ] || { echo "check_layers: no $B/libtl.a"; exit 1; }

# an object of the build whose source is still there (not one left by a moved file)
R=$(dirname "$0")/..
live() { s=${1#$B/obj/}; [ -f "$1" ] && [ -f "$R/${s%.o}.c" ]; }
# defined external symbols (text, data, bss, read-only, common, weak) of objects
defs() { for o in "$@"; do live "$o" && nm -g --defined-only "$o"; done | awk 'NF == 3 && $2 ~ /[TDBRCVWGSI]/ { print $3 }' | sort -u; }
undefs() { for o in "$@"; do live "$o" && nm -u "$o"; done | awk '{ print $NF }' | sort -u; }

bad=$(nm -g --defined-only "$B/libtl.a" | awk 'NF == 3 && $2 ~ /[TDBRCVWGSI]/ { print $3 }' | grep -v '^tl' | sort -u)
[ -z "$bad" ] || say "external symbols of libtl.a without the tl prefix:" $bad

for o in "$O"/*/*.o "$O"/lang/*/*.o; do
  live "$o" || continue
  case $o in
  "$O"/lang/rt/*) bad=$(defs "$o" | grep -v '^tlrt_') ;;
  *) bad=$(defs "$o" | grep '^tlrt_') ;;
  esac
  [ -z "$bad" ] || say "${o#$O/}: tlrt_ is the run time's prefix (src/lang/rt/ only):" $bad
done

# the objects $2 reference none of the symbols listed in $T (message $1)
forbid() {
  hit=$(undefs $2 | comm -12 - "$T")
  [ -z "$hit" ] || say "$1" $hit
}
T=$(mktemp)
trap 'rm -f "$T"' EXIT
L=$O/lang
defs $L/check/*.o $L/gen/*.o $L/rt/*.o $L/*.o > "$T"
forbid "lang/front calls a later stage or the driver:" "$L/front/*.o"
defs $L/gen/*.o $L/rt/*.o $L/*.o > "$T"
forbid "lang/check calls a later stage or the driver:" "$L/check/*.o"
defs $(ls $L/check/*.o 2>/dev/null | grep -v '/types\.o$') $L/*.o > "$T"
forbid "lang/gen calls the checker (of check/, only types.o's functions) or the driver:" "$L/gen/*.o"
defs $L/front/*.o $L/check/*.o $L/gen/*.o $L/*.o > "$T"
forbid "lang/rt calls the compiler:" "$L/rt/*.o"

# includes, from the sources (SRC: the repository's src/, beside this script)
S=$R/src/lang
includes() { grep -Ho '^#include "lang/[^"]*"' "$@" 2>/dev/null | sed 's/#include //; s/"//g'; }
bad=$(includes $S/front/*.[ch] | grep -E ':lang/(check|gen|rt)/|:lang/lang\.h')
[ -z "$bad" ] || say "lang/front includes a later stage or the driver:" $bad
bad=$(includes $S/check/*.[ch] | grep -E ':lang/(gen|rt)/|:lang/lang\.h')
[ -z "$bad" ] || say "lang/check includes a later stage or the driver:" $bad
bad=$(includes $S/gen/*.[ch] | grep -E ':lang/check/|:lang/lang\.h' | grep -vE ':lang/check/types\.h$')
[ -z "$bad" ] || say "lang/gen includes the checker (of check/, only types.h) or the driver:" $bad
bad=$(includes $S/rt/*.[ch] | grep -vE ':lang/rt/')
[ -z "$bad" ] || say "lang/rt includes the compiler:" $bad

[ $fail = 0 ] && echo "check_layers: every external symbol starts with tl; front <- check <- gen, rt apart, in calls and includes"
exit $fail
