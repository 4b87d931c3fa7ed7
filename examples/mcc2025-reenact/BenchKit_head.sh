#!/bin/sh
# A stand-in for one real MCC 2025 tool (examples/mcc2025-reenact/README.md), copied into each
# tool folder that scripts/reenact-mcc2025 writes. It prints, for the instance (BK_INPUT, the
# current directory) and examination (BK_EXAMINATION) it is given, what that tool answered in
# 2025, as scripts/mcc-analysis-replay writes it for the import, after the run's synthetic time.
#
# answers/<Examination>.tsv beside it, one line per instance the tool ran on:
#   <TAB><instance><TAB><sleep><TAB><values>
# <sleep>: seconds to wait first, or `limit` (answered nothing in 2025 and runs into the time
# limit here); <values>: the import's results vector: one character per value for booleans
# (T, F, ? not computed), space-separated numbers for StateSpace and UpperBounds (? not
# computed, +inf). Formulas are matched by position among the formula file's ids sorted as
# strings, as the MCC numbers them (docs/manifest.md, "[reference]").
LC_ALL=C
export LC_ALL
tab=$(printf '\t')
row=$(grep -m1 -F "$tab$BK_INPUT$tab" "${0%/*}/answers/$BK_EXAMINATION.tsv" 2>/dev/null)
if [ -z "$row" ]; then
    # Not a run of the 2025 edition: the tool has nothing to say.
    echo CANNOT_COMPUTE
    exit 0
fi
IFS=$tab read -r instance delay values <<EOF
$row
EOF
if [ "$delay" = limit ]; then
    sleep $((BK_TIME_CONFINEMENT + 5))
    exit 0
fi
sleep "$delay"
case $values in
*[TF0-9+]*) ;;
*) echo CANNOT_COMPUTE; exit 0 ;;
esac
t=TECHNIQUES
case $BK_EXAMINATION in
StateSpace)
    set -- $values
    for name in STATES TRANSITIONS MAX_TOKEN_IN_PLACE MAX_TOKEN_PER_MARKING; do
        [ "$1" = "?" ] || echo "STATE_SPACE $name $1 $t REENACTED"
        shift
    done ;;
ReachabilityDeadlock|QuasiLiveness|StableMarking|Liveness|OneSafe)
    case $values in
    T) echo "FORMULA $BK_EXAMINATION TRUE $t REENACTED" ;;
    F) echo "FORMULA $BK_EXAMINATION FALSE $t REENACTED" ;;
    esac ;;
*)
    sed -n 's:.*<id>[[:space:]]*\([^<[:space:]]*\)[[:space:]]*</id>.*:\1:p' "$BK_EXAMINATION.xml" | sort |
    awk -v v="$values" -v exam="$BK_EXAMINATION" '
        BEGIN { if (exam == "UpperBounds") n = split(v, a, " "); else for (n = 1; n <= length(v); n++) a[n] = substr(v, n, 1) }
        a[NR] == "T" { print "FORMULA " $0 " TRUE TECHNIQUES REENACTED"; next }
        a[NR] == "F" { print "FORMULA " $0 " FALSE TECHNIQUES REENACTED"; next }
        a[NR] != "?" && a[NR] != "" { print "FORMULA " $0 " " a[NR] " TECHNIQUES REENACTED" }' ;;
esac
