#!/bin/sh
# Builds the explorer into $BK_BIN_PATH (an empty folder given by mccbuild).
# Writes nothing inside the tool folder: the build directory is $BK_BIN_PATH/target.
set -eu
: "${BK_BIN_PATH:?BK_BIN_PATH must name the output folder}"
: "${MCC_TOOL_DIR:?MCC_TOOL_DIR must name the tool folder}"
OUT="${BK_BIN_PATH%/}"
cargo build --release --locked --manifest-path "$MCC_TOOL_DIR/Cargo.toml" --target-dir "$OUT/target"
cp "$OUT/target/release/explorer" "$OUT/explorer"
chmod 755 "$OUT/explorer"
rm -rf "$OUT/target"
echo "explorer built at $OUT/explorer"
