//! The propertiesverdict XML export: the trusted values of each model as a file of version 2.0 of
//! the MCC's properties verdict format, one `verdict` per value with what decided it.

use std::path::{Path, PathBuf};

use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};

use mccbuild_core::Value;
use mccbuild_rules::trusted::TrustCase;

use super::{Export, ExportError, write_file};

/// The `tool` and `version` of the root element of a properties verdict file.
pub const VERDICT_TOOL: &str = "propertiesverdict";
pub const VERDICT_VERSION: &str = "2.0";

/// The categories the properties verdict grammar (version 2.0) enumerates for MCC examinations.
pub const VERDICT_MCC_CATEGORIES: [&str; 13] = [
    "StateSpace",
    "UpperBounds",
    "ReachabilityDeadlock",
    "QuasiLiveness",
    "StableMarking",
    "Liveness",
    "OneSafe",
    "ReachabilityFireability",
    "ReachabilityCardinality",
    "LTLFireability",
    "LTLCardinality",
    "CTLFireability",
    "CTLCardinality",
];

/// One verdict of a properties verdict file.
#[derive(Clone, Debug, PartialEq)]
pub struct VerdictEntry {
    pub instance: String,
    pub category: String,
    pub reference: String,
    pub value: String,
    pub explanation: String,
}

/// The verdicts of one model.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelVerdicts {
    pub model: String,
    pub verdicts: Vec<VerdictEntry>,
}

impl Export {
    /// Writes `<Model>.xml` under `dir` for each model with values; returns the files written.
    pub fn write_verdicts(&self, dir: &Path) -> Result<Vec<PathBuf>, ExportError> {
        mccbuild_core::fsio::create_published_dir(dir).map_err(|source| ExportError::Write {
            path: dir.to_path_buf(),
            source,
        })?;
        let mut written = Vec::new();
        for model in self.verdicts.iter().filter(|m| !m.verdicts.is_empty()) {
            let path = dir.join(format!("{}.xml", model_file_stem(&model.model)?));
            write_file(&path, &verdicts_xml(model)?)?;
            written.push(path);
        }
        Ok(written)
    }
}

/// The `category` and `reference` of a value's verdict. StateSpace values are `STATE_SPACE
/// <id>`; the other examinations the grammar enumerates are their own category with the value id
/// (formula id, or the examination's name for a global property) as reference; examinations the
/// grammar does not enumerate (MCC 2015's, SV-COMP's) use its free form, with the same
/// convention.
pub fn verdict_reference(examination: &str, id: &str) -> (String, String) {
    if examination == "StateSpace" {
        ("StateSpace".to_string(), format!("STATE_SPACE {id}"))
    } else {
        (examination.to_string(), id.to_string())
    }
}

/// The `value` of a verdict: `true`/`false` (the grammar's boolean form, as for generic
/// properties), integers in full, `+inf`, `unknown` where there is no trusted value.
pub fn verdict_value(value: Option<&Value>) -> String {
    match value {
        Some(Value::Bool(true)) => "true".to_string(),
        Some(Value::Bool(false)) => "false".to_string(),
        Some(v) => v.to_string(),
        None => "unknown".to_string(),
    }
}

/// The `explanation` of a verdict: what decided it and how many tools gave it.
pub fn verdict_explanation(
    known: bool,
    ground_truth: bool,
    case: TrustCase,
    agreeing: usize,
    computed: usize,
) -> String {
    let tools = |n: usize| if n == 1 { "tool" } else { "tools" };
    if case == TrustCase::Organisers {
        return format!(
            "decided by the organisers (rule E-6.3); {agreeing} of the {computed} {} that computed it gave it",
            tools(computed)
        );
    }
    if case == TrustCase::Reference {
        return if known {
            format!(
                "the contest's reference answer; {agreeing} of the {computed} {} that computed it gave it",
                tools(computed)
            )
        } else {
            format!(
                "unknown in the contest's reference answers; {computed} {} computed it",
                tools(computed)
            )
        };
    }
    match (known, ground_truth) {
        (true, true) => format!(
            "expected answer given with the task; {agreeing} of the {computed} {} that computed it gave it",
            tools(computed)
        ),
        (true, false) => format!(
            "trusted value (rule E-3.1, {}); {agreeing} of the {computed} {} that computed it gave it",
            case.name(),
            tools(computed)
        ),
        (false, true) => format!(
            "no expected answer given with the task; {computed} {} computed it",
            tools(computed)
        ),
        (false, false) => format!(
            "no trusted value (rule E-3.1, {}); {computed} {} computed it",
            case.name(),
            tools(computed)
        ),
    }
}

/// The file name of a model's verdicts, without `.xml`.
pub fn model_file_stem(model: &str) -> Result<&str, ExportError> {
    let why = if model.is_empty() {
        Some("it is empty")
    } else if model == "." || model == ".." {
        Some("it is a folder name")
    } else if model.contains(['/', '\\', '\0']) {
        Some("it holds a path separator")
    } else {
        None
    };
    match why {
        Some(why) => Err(ExportError::ModelFileName {
            model: model.to_string(),
            why,
        }),
        None => Ok(model),
    }
}

/// Whether XML 1.0 can carry `text` (escaped where needed): no control characters but tab and
/// line ends, no U+FFFE or U+FFFF.
fn xml_safe(what: &'static str, text: &str) -> Result<(), ExportError> {
    let bad = text.chars().any(|c| {
        (c < ' ' && !matches!(c, '\t' | '\n' | '\r')) || c == '\u{FFFE}' || c == '\u{FFFF}'
    });
    if bad {
        Err(ExportError::NotXml {
            what,
            text: text.escape_debug().to_string(),
        })
    } else {
        Ok(())
    }
}

/// A model's properties verdict file (version 2.0 of the MCC's format): `toolspecific` with
/// `modelreference`, then one `verdict` per value, each naming its instance in `modelinstance`.
/// Attributes are written in the grammar's order, escaped by quick-xml.
pub fn verdicts_xml(model: &ModelVerdicts) -> Result<Vec<u8>, ExportError> {
    xml_safe("model", &model.model)?;
    for v in &model.verdicts {
        xml_safe("instance", &v.instance)?;
        xml_safe("examination", &v.category)?;
        xml_safe("value id", &v.reference)?;
    }
    let mut writer = quick_xml::Writer::new_with_indent(Vec::new(), b' ', 2);
    // Writing into a Vec cannot fail.
    let _ = write_verdicts_events(&mut writer, model);
    let mut bytes = writer.into_inner();
    bytes.push(b'\n');
    Ok(bytes)
}

fn write_verdicts_events(
    writer: &mut quick_xml::Writer<Vec<u8>>,
    model: &ModelVerdicts,
) -> std::io::Result<()> {
    writer.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    let mut root = BytesStart::new("toolspecific");
    root.push_attribute(("tool", VERDICT_TOOL));
    root.push_attribute(("version", VERDICT_VERSION));
    writer.write_event(Event::Start(root))?;
    let mut reference = BytesStart::new("modelreference");
    reference.push_attribute(("modelname", model.model.as_str()));
    writer.write_event(Event::Empty(reference))?;
    for v in &model.verdicts {
        let mut verdict = BytesStart::new("verdict");
        verdict.push_attribute(("category", v.category.as_str()));
        verdict.push_attribute(("reference", v.reference.as_str()));
        verdict.push_attribute(("value", v.value.as_str()));
        writer.write_event(Event::Start(verdict))?;
        let mut instance = BytesStart::new("modelinstance");
        instance.push_attribute(("reference", v.instance.as_str()));
        writer.write_event(Event::Empty(instance))?;
        writer.write_event(Event::Start(BytesStart::new("explanation")))?;
        writer.write_event(Event::Text(BytesText::new(&v.explanation)))?;
        writer.write_event(Event::End(BytesEnd::new("explanation")))?;
        writer.write_event(Event::End(BytesEnd::new("verdict")))?;
    }
    writer.write_event(Event::End(BytesEnd::new("toolspecific")))
}
