//! The scoring database: salsa's storage with an optional log of executed queries (here), its
//! inputs created from a contest's shape (`build`), handles to them (`handles`), the setters
//! that apply a run's new record, only when something changed (`changes`), and the driver that
//! settles the Confidence-dependent decisions after every change (`driver`).

mod build;
mod changes;
mod driver;
mod handles;

use std::sync::{Arc, Mutex};

pub use build::{ContestInputs, ExamInstanceInputs, RunInputs};
pub use changes::Changes;
use driver::Driver;
pub use handles::Handles;

use crate::db::{Answers, RunRef};

/// The database, with an optional log of executed queries (for incrementality tests and
/// `--explain-incremental` style diagnostics).
#[salsa::db]
#[derive(Clone)]
pub struct ScoringDb {
    storage: salsa::Storage<Self>,
    log: Arc<Mutex<Option<Vec<salsa::DatabaseKeyIndex>>>>,
    /// What [`ScoringDb::settle`] keeps between changes.
    driver: Driver,
}

#[salsa::db]
impl salsa::Database for ScoringDb {}

impl Default for ScoringDb {
    /// A database without event log (salsa builds an event for every validated memo when a
    /// callback is installed: it costs time at contest scale).
    fn default() -> Self {
        ScoringDb {
            storage: salsa::Storage::new(None),
            log: Arc::default(),
            driver: Driver::default(),
        }
    }
}

impl ScoringDb {
    /// A database that records which queries execute (see [`ScoringDb::start_logging`]).
    pub fn with_log() -> Self {
        let log: Arc<Mutex<Option<Vec<salsa::DatabaseKeyIndex>>>> = Arc::default();
        let sink = log.clone();
        let storage = salsa::Storage::new(Some(Box::new(move |event: salsa::Event| {
            if let salsa::EventKind::WillExecute { database_key } = event.kind {
                if let Some(log) = sink.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
                    log.push(database_key);
                }
            }
        })));
        ScoringDb {
            storage,
            log,
            driver: Driver::default(),
        }
    }

    /// Starts recording which queries execute (a database made by [`ScoringDb::with_log`]).
    pub fn start_logging(&self) {
        *self.log.lock().unwrap_or_else(|e| e.into_inner()) = Some(Vec::new());
    }

    /// The queries executed since the last call, by name (`value_answers`, `exam_scores`...).
    pub fn take_executed(&self) -> Vec<String> {
        self.take_executed_with_ids()
            .into_iter()
            .map(|(name, _)| name)
            .collect()
    }

    /// The queries executed since the last call: each one's name and the salsa id of what it
    /// ran on (for a query of a model examination, [`Handles::examination_ids`] tells which).
    pub fn take_executed_with_ids(&self) -> Vec<(String, salsa::Id)> {
        self.executed_with_ids().unwrap_or_default()
    }

    /// As [`ScoringDb::take_executed_with_ids`]; None when nothing is being recorded.
    pub fn executed_with_ids(&self) -> Option<Vec<(String, salsa::Id)>> {
        let keys = self
            .log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
            .map(std::mem::take)?;
        Some(
            keys.into_iter()
                .map(|k| {
                    let name = salsa::Database::ingredient_debug_name(self, k.ingredient_index());
                    (name.into_owned(), k.key_index())
                })
                .collect(),
        )
    }

    /// A run's tool and answers.
    pub fn run_answers(&self, run: RunRef) -> (u32, Answers) {
        (
            run.examination.exam_instances(self)[run.exam_instance].tools[run.position],
            run.examination.answers(self)[run.exam_instance][run.position].clone(),
        )
    }
}
