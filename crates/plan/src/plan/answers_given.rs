//! The answers given besides the runs: the reference answers (`[reference]`) and the
//! organisers' decided values (`[contest] corrections`, E-6.3), read into the examination
//! instances. Neither is a key ingredient: a change re-scores, it reruns nothing.

use std::collections::HashSet;

use mccbuild_core::diag::Problems;

use super::Plan;
use crate::corrections::Corrections;
use crate::reference::Reference;

impl Plan {
    /// `[contest] corrections`: reads the organisers' decided values (E-6.3) and gives each
    /// examination instance its own (not part of any run key: new corrections re-score). A
    /// file that cannot be read, or an entry naming no value of the contest or a value of the
    /// wrong kind, fails the plan: a contest is never scored with part of its decisions.
    pub(super) fn add_corrections(&mut self) -> Result<(), Problems> {
        let Some(path) = &self.contest.corrections else {
            return Ok(());
        };
        let corrections = Corrections::load(path)?;
        let edition = self.contest.edition.clone();
        let mut used = vec![false; corrections.len()];
        for ei in &mut self.exam_instances {
            ei.corrections = corrections.values(
                &self.instances[ei.instance].name,
                &edition.examinations[ei.exam].name,
                &ei.ids,
                &mut used,
            );
        }
        let mut problems = Problems::default();
        let instances: HashSet<&str> = self.instances.iter().map(|i| i.name.as_str()).collect();
        for (entry, used) in corrections.entries.iter().zip(&used) {
            let why = if !instances.contains(entry.instance.as_str()) {
                "no such instance in the contest".to_string()
            } else if let Some(exam) = edition.examination(&entry.examination) {
                if *used {
                    let kind = edition.examinations[exam].value;
                    if entry.value.kind() == kind {
                        continue;
                    }
                    format!(
                        "the value {} is not of the examination's kind ({})",
                        entry.value,
                        kind.name()
                    )
                } else {
                    format!(
                        "no value `{}` in this examination of this instance (or no tool takes part in it)",
                        entry.id
                    )
                }
            } else {
                format!(
                    "no examination `{}` in the edition {}",
                    entry.examination, edition.info.name
                )
            };
            problems.push(corrections.unknown_value(entry, &why));
        }
        problems.into_result(())?;
        self.corrections = Some(corrections);
        Ok(())
    }

    /// `[reference]`: reads the reference answers of the contest's instances and gives each
    /// examination instance its values (not part of any run key: a new reference re-scores).
    pub(super) fn add_reference(&mut self) {
        let Some(config) = &self.contest.reference else {
            return;
        };
        let names: HashSet<&str> = self.instances.iter().map(|i| i.name.as_str()).collect();
        let reference = match Reference::load(&config.answers, &names, &self.contest.edition) {
            Ok((reference, problems)) => {
                self.problems.extend(problems);
                reference
            }
            Err(problems) => {
                self.problems.extend(problems);
                return;
            }
        };
        let edition = &self.contest.edition;
        for ei in &mut self.exam_instances {
            ei.reference = reference.values(
                &self.instances[ei.instance].name,
                &edition.examinations[ei.exam].name,
                &ei.ids,
            );
        }
        self.reference = Some(reference);
    }
}
