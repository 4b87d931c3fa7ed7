//! What the terminal shows: the podium tables (coloured and fitted to the terminal's width),
//! explanations in words, the reliability table.

use std::fmt::Write as _;

use mccbuild_plan::Plan;
use mccbuild_rules::exact::{Exact, decimal, parse};
use mccbuild_scoring::explain::{ConfidenceRow, ToolExplanation, ValueExplanation};
use mccbuild_scoring::scores::{ReferenceReport, ScoresReport};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// How the podium tables are printed on a terminal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct TermStyle {
    /// ANSI colours (medals, titles).
    pub color: bool,
    /// The terminal's width in columns: longer tool names are shortened, the awards line split.
    pub width: Option<usize>,
}

impl TermStyle {
    /// The style of standard output, as anstream decides it for every command-line tool that
    /// follows the conventions: colour on a terminal whose `TERM` supports it, never with
    /// `NO_COLOR` (https://no-color.org) or `CLICOLOR=0`, always with `CLICOLOR_FORCE`. The
    /// width: `COLUMNS` if set, else the terminal's when standard output is one.
    pub fn detect() -> TermStyle {
        let stdout = std::io::stdout();
        let color = matches!(
            anstream::AutoStream::choice(&stdout),
            anstream::ColorChoice::Always | anstream::ColorChoice::AlwaysAnsi
        );
        let width = std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.parse::<usize>().ok())
            .filter(|w| *w > 0)
            .or_else(|| terminal_size::terminal_size_of(&stdout).map(|(w, _)| w.0 as usize))
            .filter(|w| *w > 0);
        TermStyle { color, width }
    }
}

/// The podium tables, as printed after `run` and by `scores` (plain: no colour, any width).
pub fn podium_text(plan: &Plan, report: &ScoresReport) -> String {
    podium_text_styled(plan, report, TermStyle::default())
}

/// The width of `text` in terminal columns.
fn columns(text: &str) -> usize {
    UnicodeWidthStr::width(text)
}

/// Shortens `name` to `width` columns, marking the cut with `~`.
fn fit(name: &str, width: usize) -> String {
    if columns(name) <= width {
        return name.to_string();
    }
    let mut s = String::new();
    let mut used = 0;
    for c in name.chars() {
        let w = UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        s.push(c);
        used += w;
    }
    s.push('~');
    s
}

/// `text` with every line fitted to `width` columns (none: as it is): a longer line is broken at
/// spaces, its continuations indented two columns deeper than it; a word longer than a whole
/// line (a path, a digest) is broken into pieces of the line's width, no character lost (the
/// `--json` forms keep such words whole).
pub fn fit_lines(text: &str, width: Option<usize>) -> String {
    let Some(width) = width.filter(|w| *w >= 20) else {
        return text.to_string();
    };
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (line, newline) = match line.strip_suffix('\n') {
            Some(l) => (l, "\n"),
            None => (line, ""),
        };
        if columns(line) <= width {
            out.push_str(line);
            out.push_str(newline);
            continue;
        }
        let indent = line.len() - line.trim_start_matches(' ').len();
        let more = " ".repeat((indent + 2).min(width / 2));
        let mut current = " ".repeat(indent);
        let mut start = true;
        for word in line.split(' ').filter(|w| !w.is_empty()) {
            let used = columns(&current);
            let gap = usize::from(!start);
            if !start && used + gap + columns(word) > width {
                out.push_str(current.trim_end());
                out.push('\n');
                current = more.clone();
                start = true;
            }
            let mut rest = word;
            loop {
                let used = columns(&current) + usize::from(!start);
                if used + columns(rest) <= width {
                    if !start {
                        current.push(' ');
                    }
                    current.push_str(rest);
                    start = false;
                    break;
                }
                // A word longer than the room left on a fresh line: as much as fits, then the
                // rest on the next line.
                let room = width.saturating_sub(used).max(1);
                let mut cut = 0;
                let mut taken = 0;
                for (i, c) in rest.char_indices() {
                    let w = UnicodeWidthChar::width(c).unwrap_or(0);
                    if taken + w > room {
                        break;
                    }
                    taken += w;
                    cut = i + c.len_utf8();
                }
                if cut == 0 {
                    cut = rest.chars().next().map_or(rest.len(), char::len_utf8);
                }
                if !start {
                    current.push(' ');
                }
                current.push_str(&rest[..cut]);
                out.push_str(current.trim_end());
                out.push('\n');
                current = more.clone();
                start = true;
                rest = &rest[cut..];
                if rest.is_empty() {
                    break;
                }
            }
        }
        if !current.trim().is_empty() {
            out.push_str(current.trim_end());
        }
        out.push_str(newline);
    }
    out
}

/// `text` padded with spaces to `width` columns.
fn pad(text: &str, width: usize) -> String {
    format!("{text}{}", " ".repeat(width.saturating_sub(columns(text))))
}

/// The podium tables for a terminal of the given style.
pub fn podium_text_styled(plan: &Plan, report: &ScoresReport, style: TermStyle) -> String {
    let paint = |code: &str, text: &str| {
        if style.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}",
        paint("1", &format!("{} ({})", report.contest, report.edition))
    );
    if let Some(p) = &report.partial {
        let _ = writeln!(out, "{}", paint("1;33", &p.notice()));
    }
    if let Some(r) = &report.reference {
        let _ = writeln!(
            out,
            "trusted values: {}",
            if report.basis == "reference" {
                format!("the reference ({})", r.answers)
            } else {
                format!("the {} (reference: {})", report.basis, r.answers)
            }
        );
    }
    for category in &plan.contest.edition.categories {
        let Some(rows) = report.standings.get(&category.name) else {
            continue;
        };
        if rows.is_empty() {
            let _ = writeln!(
                out,
                "\n{}\n  no tool took part",
                paint("1", &category.title)
            );
            continue;
        }
        let _ = writeln!(out, "\n{}", paint("1", &category.title));
        // "  " + place (9) + " " + name + "  " + score: 14 columns besides the name and score.
        let longest = rows
            .iter()
            .map(|r| columns(&r.tool))
            .max()
            .unwrap_or(4)
            .max(4);
        let score_width = rows
            .iter()
            .map(|r| shown_score(r).len())
            .max()
            .unwrap_or(4)
            .max(6);
        let width = match style.width {
            Some(w) => longest.min(w.saturating_sub(14 + score_width).max(6)),
            None => longest,
        };
        for row in rows {
            let place = match (row.rank, &row.medal) {
                (Some(r), Some(m)) => {
                    let code = match m.as_str() {
                        "gold" => "1;33",
                        "silver" => "1;37",
                        _ => "1;31",
                    };
                    format!("{r:>2} {}", paint(code, &format!("{m:<6}")))
                }
                (Some(r), None) => format!("{r:>2}       "),
                (None, _) if !row.competing => "  (ref.) ".to_string(),
                (None, _) => "  (var.) ".to_string(),
            };
            let _ = writeln!(
                out,
                "  {place} {}  {:>score_width$}",
                pad(&fit(&row.tool, width), width),
                shown_score(row)
            );
        }
        if let Some(a) = report.awards.get(&category.name) {
            if a.fastest.is_some() || a.least_memory.is_some() {
                // On a narrow terminal, each award on its own line, names shortened to fit.
                let name = |n: &Option<String>, label: usize| {
                    let n = n.as_deref().unwrap_or("-");
                    style
                        .width
                        .map_or(n.to_string(), |w| fit(n, w.saturating_sub(label).max(6)))
                };
                let fastest = format!("  fastest: {}", name(&a.fastest_shown(), 11));
                let memory = format!("least memory: {}", name(&a.least_memory_shown(), 16));
                match style.width {
                    Some(w) if columns(&fastest) + 3 + columns(&memory) > w => {
                        let _ = writeln!(out, "{fastest}\n  {memory}");
                    }
                    _ => {
                        let _ = writeln!(out, "{fastest}   {memory}");
                    }
                }
            }
        }
    }
    if let Some(r) = &report.reference {
        out.push_str(&reference_text(r));
    }
    out
}

/// The tools against the reference answers, and the vote against them.
pub fn reference_text(r: &ReferenceReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nAgainst the reference ({}; it knows {} of {} values)",
        r.answers, r.known, r.values
    );
    let width = r.tools.keys().map(|t| columns(t)).max().unwrap_or(4);
    for (tool, c) in &r.tools {
        let _ = writeln!(
            out,
            "  {}  right {}, wrong {}, unknown {}, unanswered {}",
            pad(tool, width),
            c.right,
            c.wrong,
            c.unknown,
            c.unanswered
        );
    }
    let _ = writeln!(
        out,
        "  vote and reference: {} values differ, {} known to the vote only, {} to the reference only",
        r.disagreements.len(),
        r.vote_only,
        r.reference_only
    );
    const SHOWN: usize = 20;
    for d in r.disagreements.iter().take(SHOWN) {
        let _ = writeln!(
            out,
            "    {} {} {}: vote {} ({}), reference {}",
            d.instance, d.examination, d.id, d.vote, d.case, d.reference
        );
    }
    if r.disagreements.len() > SHOWN {
        let _ = writeln!(
            out,
            "    ... and {} more (`mccbuild scores --json`: reference.disagreements)",
            r.disagreements.len() - SHOWN
        );
    }
    out
}

/// `mccbuild explain --instance I --examination E --id V`, in words: the trusted value (and the
/// reference's) first, then every answer, the weights and the case of E-3.1 that decided it.
pub fn value_text(x: &ValueExplanation) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{} / {} / {}", x.instance, x.examination, x.id);
    // The verdict first, then how it was reached (answers, weights, V, the case of E-3.1).
    let _ = writeln!(
        out,
        "  trusted value: {}{}",
        x.trusted.as_deref().unwrap_or("unknown"),
        if x.reference.is_some() {
            format!(" (basis: {})", x.basis)
        } else {
            String::new()
        }
    );
    if let Some(r) = &x.reference {
        let judged: Vec<String> = r
            .judgements
            .iter()
            .map(|(t, j)| format!("{t} {}", j.name()))
            .collect();
        let _ = writeln!(
            out,
            "  reference ({}): {}; the vote: {} ({}){}",
            r.answers,
            r.value.as_deref().unwrap_or("unknown"),
            r.vote.as_deref().unwrap_or("unknown"),
            r.vote_case,
            if judged.is_empty() {
                String::new()
            } else {
                format!("; {}", judged.join(", "))
            }
        );
    }
    let width = x
        .answers
        .iter()
        .map(|a| a.tool.len())
        .chain(x.not_computed.iter().map(String::len))
        .max()
        .unwrap_or(4);
    for a in &x.answers {
        match &a.confidence {
            Some(c) => {
                let _ = writeln!(
                    out,
                    "  {:<width$}  {:<8}  Confidence {}",
                    a.tool,
                    a.value,
                    decimal(c, 6)
                );
            }
            None => {
                let _ = writeln!(out, "  {:<width$}  {}", a.tool, a.value);
            }
        }
    }
    for t in &x.not_computed {
        let _ = writeln!(out, "  {t:<width$}  (takes part, gave no value)");
    }
    if !x.weights.is_empty() {
        let w: Vec<String> = x
            .weights
            .iter()
            .map(|w| {
                format!(
                    "{} weighs {} = {} ({} tool{})",
                    w.value,
                    decimal(&w.weight, 6),
                    w.weight_exact,
                    w.tools,
                    if w.tools == 1 { "" } else { "s" }
                )
            })
            .collect();
        let _ = writeln!(out, "  weights: {}", w.join("; "));
    }
    match &x.confidence_set {
        Some(v) => {
            let _ = writeln!(
                out,
                "  in the Confidence set V (E-2.2: a majority and at least 3 tools agree on {v})"
            );
        }
        None => {
            let _ = writeln!(out, "  not in the Confidence set V (E-2.2)");
        }
    }
    let _ = writeln!(out, "  {}", x.reason);
    out
}

/// `mccbuild explain --tool T --category C`, in words: every entry, then the total.
pub fn tool_text(x: &ToolExplanation) -> String {
    let mut out = String::new();
    let d = |x: &Exact, places: usize| decimal(x, places);
    let _ = writeln!(
        out,
        "{} in {}: {} points (exactly {})",
        x.tool,
        x.category,
        d(&x.score, 6),
        x.score_exact
    );
    for m in &x.models {
        let _ = writeln!(
            out,
            "  model {} ({}, {} instance{}): {}",
            m.model,
            m.kind,
            m.instances,
            if m.instances == 1 { "" } else { "s" },
            d(&m.weighted, 6)
        );
        for e in &m.entries {
            let _ = writeln!(
                out,
                "    {} {}: {} right x {} = {}, {} wrong: -{}, points {} x instance weight {} x {} multiplier {} = {}",
                e.instance,
                e.examination,
                e.right,
                d(&e.score_value, 4),
                d(&e.earned, 4),
                e.wrong,
                d(&e.penalty, 4),
                d(&e.points, 4),
                d(&e.instance_weight, 4),
                m.kind,
                d(&e.kind_multiplier, 4),
                d(&e.weighted, 6)
            );
        }
    }
    let _ = writeln!(out, "  total: {}", d(&x.score, 6));
    out
}

/// A podium row's score with two decimals, rounded once from the exact fraction (two tools tied
/// at 32 both show 32.00).
fn shown_score(row: &mccbuild_scoring::scores::StandingRow) -> String {
    match parse(&row.score_exact) {
        Some(exact) => decimal(&exact, 2),
        None => format!("{:.2}", row.score),
    }
}

/// The reliability table of `mccbuild confidence`.
pub fn confidence_text(rows: &[ConfidenceRow], agreed_values: u64) -> String {
    let mut out = String::new();
    let width = rows.iter().map(|r| r.tool.len()).max().unwrap_or(4).max(4);
    let _ = writeln!(
        out,
        "{:<width$}  {:>9}  {:>10}  {:>10}  {:>12}",
        "tool", "rate", "correct", "selected", "examinations"
    );
    for r in rows {
        let _ = writeln!(
            out,
            "{:<width$}  {:>8}%  {:>10}  {:>10}  {:>12}",
            r.tool,
            decimal(&(&r.rate * Exact::from_integer(100.into())), 2),
            r.correct,
            r.selected,
            r.examinations
        );
    }
    let _ = writeln!(
        out,
        "{agreed_values} values in the Confidence set V (E-2.2)"
    );
    out
}

#[cfg(test)]
mod tests {
    use super::fit_lines;

    #[test]
    fn fitted_lines_break_at_spaces_and_long_words_lose_nothing() {
        let text = "short\n  one two three four five six seven eight nine ten eleven\n  \
                    record: /a/very/long/path/without/any/space/in/it/at/all.json\n";
        let fitted = fit_lines(text, Some(24));
        for line in fitted.lines() {
            assert!(line.chars().count() <= 24, "{line:?} in\n{fitted}");
        }
        assert_eq!(
            fitted,
            "short\n  one two three four\n    five six seven eight\n    nine ten eleven\n  \
             record:\n    /a/very/long/path/wi\n    thout/any/space/in/i\n    t/at/all.json\n"
        );
        // Every character is still there, in order.
        let squeeze = |s: &str| s.split_whitespace().collect::<String>();
        assert_eq!(squeeze(&fitted), squeeze(text));
        // No width, or a wide one: as it is.
        assert_eq!(fit_lines(text, None), text);
        assert_eq!(fit_lines(text, Some(200)), text);
    }
}
