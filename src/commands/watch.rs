//! `mccbuild watch`: one long-lived process that keeps the scoring database and applies each
//! change as it happens (`mccbuild_engine::watch`), until `--updates` updates were published or
//! a signal stops it.

use mccbuild_engine::watch::{Watch, WatchOptions};

use crate::error::Error;

/// Runs the watch loop until `--updates` updates were published (or forever).
pub fn watch(options: WatchOptions) -> Result<(), Error> {
    let watch = Watch::open(options)?;
    // Installed, not inherited: a watch started in the background of a script inherits SIGINT
    // ignored, and must still stop on Ctrl-C or `kill -INT`.
    let cancel = crate::signals::cancel_on_interrupt()?;
    Ok(watch.run(&cancel)?)
}
