# Shared by the qualification's test tools (tests/it/qualify.rs): `answers [SUFFIX]` prints what a
# conforming tool prints for $BK_EXAMINATION on the instance in the working directory: every value
# (TRUE, or 1 for integers; right or wrong does not matter to the qualification), each line ending
# with SUFFIX (default `TECHNIQUES EXPLICIT`). Each other script here adds one protocol fault.
ids() { sed -n 's:.*<id>\(.*\)</id>.*:\1:p' "$BK_EXAMINATION.xml"; }
answers() {
    t="${1-TECHNIQUES EXPLICIT}"
    case "$BK_EXAMINATION" in
        StateSpace)
            for v in STATES TRANSITIONS MAX_TOKEN_IN_PLACE MAX_TOKEN_PER_MARKING; do
                echo "STATE_SPACE $v 1 $t"
            done ;;
        ReachabilityDeadlock|QuasiLiveness|StableMarking|Liveness|OneSafe)
            echo "FORMULA $BK_EXAMINATION TRUE $t" ;;
        UpperBounds) for id in $(ids); do echo "FORMULA $id 1 $t"; done ;;
        *) for id in $(ids); do echo "FORMULA $id TRUE $t"; done ;;
    esac
}
