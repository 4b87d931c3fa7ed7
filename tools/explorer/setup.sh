#!/bin/sh
# Builds the explorer into $BK_BIN_PATH (an empty folder given by mccbuild).
# Writes nothing inside the tool folder: the build directory is $CARGO_TARGET_DIR when it is set
# (scripts/test shares one with the explorer's own tests, so the same code is compiled once),
# else $BK_BIN_PATH/target, removed once the binary is copied out.
set -eu
: "${BK_BIN_PATH:?BK_BIN_PATH must name the output folder}"
: "${MCC_TOOL_DIR:?MCC_TOOL_DIR must name the tool folder}"
OUT="${BK_BIN_PATH%/}"
target="${CARGO_TARGET_DIR:-$OUT/target}"
cargo build --release --locked --manifest-path "$MCC_TOOL_DIR/Cargo.toml" --target-dir "$target"
cp "$target/release/explorer" "$OUT/explorer"
chmod 755 "$OUT/explorer"
[ -n "${CARGO_TARGET_DIR:-}" ] || rm -rf "$OUT/target"
echo "explorer built at $OUT/explorer"
