//! Where a stored run's record lies (a loose file with its stamp, or a line of a pack), and the
//! 32 bytes the index and delta files hold it in.

use std::fs;

use mccbuild_core::digest::Digest;
use mccbuild_core::stamp::FileStamp;

/// The width of a place in the index and delta files.
pub(super) const PLACE: usize = 32;

/// What a record file (or a pack) looked like when its content was last verified: the part of
/// its [`FileStamp`] the index and delta files keep for it (size, change time, inode: 24 bytes
/// per record). Any write, truncation, rename over it or attribute change moves its change time
/// (which no user call can set back).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
    pub size: u64,
    pub ctime_ns: i64,
    pub ino: u64,
}

/// The one projection of a file's whole stamp onto the index's compact one.
impl From<FileStamp> for Stamp {
    fn from(stamp: FileStamp) -> Stamp {
        Stamp {
            size: stamp.size,
            // Nanoseconds since 1970 fit an i64 until the year 2262.
            ctime_ns: stamp.ctime_ns as i64,
            ino: stamp.ino,
        }
    }
}

impl Stamp {
    pub(super) fn of(meta: &fs::Metadata) -> Stamp {
        Stamp::from(FileStamp::of(meta))
    }
}

/// Where a stored run's record lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Place {
    /// `runs/<shard>/<key>.json`, with its file's stamp when it was verified (`None`: not yet).
    Loose(Option<Stamp>),
    /// A line of `packs/<pack>.jsonl` (`crate::pack`).
    Packed { pack: u32, offset: u64, len: u32 },
}

impl Default for Place {
    fn default() -> Place {
        Place::Loose(None)
    }
}

impl Place {
    pub(super) fn to_bytes(self) -> [u8; PLACE] {
        let (tag, a, b, c) = match self {
            Place::Loose(s) => {
                let s = s.unwrap_or(Stamp {
                    size: 0,
                    ctime_ns: 0,
                    ino: 0,
                });
                (0u64, s.size, s.ctime_ns as u64, s.ino)
            }
            Place::Packed { pack, offset, len } => (1, pack as u64, offset, len as u64),
        };
        let mut bytes = [0u8; PLACE];
        for (i, v) in [tag, a, b, c].into_iter().enumerate() {
            bytes[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
        }
        bytes
    }

    pub(super) fn from_bytes(b: &[u8]) -> Option<Place> {
        let u = |i: usize| u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]));
        match u(0) {
            0 => {
                let s = Stamp {
                    size: u(1),
                    ctime_ns: u(2) as i64,
                    ino: u(3),
                };
                Some(Place::Loose((s.size != 0).then_some(s)))
            }
            1 => Some(Place::Packed {
                pack: u32::try_from(u(1)).ok()?,
                offset: u(2),
                len: u32::try_from(u(3)).ok()?,
            }),
            _ => None,
        }
    }
}

/// A record's content digest and where it lies.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Meta {
    pub(super) digest: Option<Digest>,
    pub(super) place: Place,
}
