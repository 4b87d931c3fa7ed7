//! Names a user typed that are not the contest's (`--tool explorr`, `--category ctl`): the
//! nearest valid name and the list of valid ones, for the error message.

/// At most this many valid names are listed (the rest are counted).
const LISTED: usize = 12;

/// What follows "no tool `explorr` in contest.toml": `; did you mean `explorer`? (tools:
/// explorer, lola)`, the suggestion when one valid name is close (the same but for case, or at
/// most a third of its letters edited), the list always (the first 12, then how many more).
/// `what` names the list (`tools`, `categories`...).
pub fn did_you_mean<'a>(
    name: &str,
    valid: impl IntoIterator<Item = &'a str>,
    what: &str,
) -> String {
    let valid: Vec<&str> = valid.into_iter().collect();
    if valid.is_empty() {
        return format!(" (it has no {what})");
    }
    let nearest = valid
        .iter()
        .map(|v| (distance(&name.to_lowercase(), &v.to_lowercase()), *v))
        .min();
    let suggestion = match nearest {
        Some((d, v)) if d <= (name.chars().count() / 3).max(1) => {
            format!("; did you mean `{v}`?")
        }
        _ => String::new(),
    };
    let mut list = valid[..valid.len().min(LISTED)].join(", ");
    if valid.len() > LISTED {
        list += &format!(", ... ({} in all)", valid.len());
    }
    format!("{suggestion} ({what}: {list})")
}

/// Levenshtein distance, over characters.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_name_is_suggested_and_the_valid_ones_listed() {
        assert_eq!(distance("explorr", "explorer"), 1);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(
            did_you_mean("explorr", ["explorer", "lola"], "tools"),
            "; did you mean `explorer`? (tools: explorer, lola)"
        );
        // Case alone is close.
        assert_eq!(
            did_you_mean("ctl", ["StateSpace", "CTL"], "categories"),
            "; did you mean `CTL`? (categories: StateSpace, CTL)"
        );
        // Nothing close: the list only.
        assert_eq!(
            did_you_mean("zzz", ["explorer", "lola"], "tools"),
            " (tools: explorer, lola)"
        );
        assert_eq!(did_you_mean("a", [], "tools"), " (it has no tools)");
        let many: Vec<String> = (0..20).map(|i| format!("m{i:02}")).collect();
        let text = did_you_mean("q", many.iter().map(String::as_str), "models");
        assert!(text.ends_with("m11, ... (20 in all))"), "{text}");
    }
}
