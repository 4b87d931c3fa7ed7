//! Rule M-9: the instance files a run does not see.

use crate::edition::{Edition, ExamId};

/// Rule M-9: "the verdict files will not be produced for some examinations [...]: for all the
/// subcategories of the GlobalProperties examinations no verdict file will be produced, for the
/// UpperBounds examination no verdict file will be produced. Additionally, any given edition of
/// the Model Checking Contest will produce no verdict file for the “surprise” models of that
/// edition." Whether a run of `exam` on an instance of a model of kind `kind` sees the verdict
/// file (the examinations and kinds are the rules file's `verdict_file` and
/// `hidden_for_model_kinds`).
pub fn shows_verdict_file(edition: &Edition, exam: ExamId, kind: usize) -> bool {
    edition.examinations[exam].verdict_file
        && !edition
            .verdict_files
            .hidden_for_model_kinds
            .iter()
            .any(|k| *k == edition.model_kinds[kind].name)
}

/// The files of an instance that a run of `exam` on it must not see, among those it has
/// (`has_file`): the verdict file where rule M-9 says so, and in a ground-truth contest the
/// task's expected answer, always (a tool could print it).
pub fn hidden_files(
    edition: &Edition,
    exam: ExamId,
    kind: usize,
    has_file: impl Fn(&str) -> bool,
) -> Vec<String> {
    let verdict_file = edition.verdict_files.file.as_str();
    let mut hidden = Vec::new();
    if !shows_verdict_file(edition, exam, kind) && has_file(verdict_file) {
        hidden.push(verdict_file.to_string());
    }
    if let Some(truth) = edition.examinations[exam]
        .truth_file
        .as_ref()
        .filter(|t| has_file(t))
    {
        hidden.push(truth.clone());
    }
    hidden
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn edition(file: &str) -> Edition {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../rules")
            .join(file);
        Edition::load(&path).unwrap()
    }

    #[test]
    fn verdict_files_hidden_as_m9_says() {
        let e = edition("mcc-2026.toml");
        let known = e.model_kind("known").unwrap();
        let surprise = e.model_kind("surprise").unwrap();
        let (ss, ub) = (
            e.examination("StateSpace").unwrap(),
            e.examination("UpperBounds").unwrap(),
        );
        let has = |f: &str| f == "GenericPropertiesVerdict.xml";
        assert!(hidden_files(&e, ss, known, has).is_empty());
        assert_eq!(
            hidden_files(&e, ub, known, has),
            vec!["GenericPropertiesVerdict.xml"]
        );
        assert_eq!(
            hidden_files(&e, ss, surprise, has),
            vec!["GenericPropertiesVerdict.xml"]
        );
        // An instance without the file has nothing to hide.
        assert!(hidden_files(&e, ub, known, |_| false).is_empty());
    }

    #[test]
    fn a_ground_truth_tasks_expected_answer_is_always_hidden() {
        let e = edition("svcomp-2012.toml");
        let exam = 0;
        let truth = e.examinations[exam].truth_file.clone().unwrap();
        let hidden = hidden_files(&e, exam, 0, |f| f == truth);
        assert_eq!(hidden, vec![truth]);
    }
}
