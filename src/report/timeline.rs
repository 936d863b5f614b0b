//! The phase timeline under the published status table: each agent and session's checkpoint
//! phases over the day before the thread's newest record, as a mermaid `gantt` block, which
//! Forgejo and Gitea render in the issue body (pure).
//!
//! It is a function of the records alone, never of the clock: the window ends at the newest
//! record, so an unchanged thread draws a byte-identical diagram and the table is not rewritten.
//! Every label is reduced to characters that carry no meaning to mermaid or markdown, so no
//! phase, agent or session name can end the block, start a directive or hide a task.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};

use crate::format::Payload;
use crate::scan::Entry;

/// How far back the timeline reaches from the newest record.
pub const WINDOW_HOURS: i64 = 24;
/// The most (agent, session) sections drawn: the ones with the newest records.
pub const MAX_SECTIONS: usize = 12;
/// The most phases drawn per section: its newest.
pub const MAX_TASKS: usize = 24;
/// The longest label, in characters: a name's own limit, so two valid names never draw alike.
const MAX_LABEL: usize = crate::format::MAX_FIELD_CHARS;

/// What starts a mermaid gantt directive at the beginning of a line (case-insensitive; checked
/// against mermaid 11's parser, where `click` and `call` begin an interaction, `vert` a marker
/// in later versions, and the others a setting).
const KEYWORDS: &str = "accdescr acctitle axisformat call click dateformat displaymode excludes \
    gantt includes inclusiveenddates section tickinterval title todaymarker topaxis vert weekday \
    weekend";

/// One pair's steps in thread order: a checkpoint's phase (`None`: an end record) and its time.
type Steps<'a> = Vec<(Option<&'a str>, DateTime<Utc>)>;

/// One bar: a phase from `start` to `end`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Task {
    phase: String,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
}

/// The mermaid block (fenced, ready for the body) for `entries` in thread order, or `None` when
/// no checkpoint falls in the window. Records still waiting in an outbox are not drawn: the
/// diagram shows the thread, as every reader sees it.
pub fn gantt(entries: &[Entry]) -> Option<String> {
    let posted: Vec<(&Entry, DateTime<Utc>)> = entries
        .iter()
        .filter(|e| !e.comment.pending)
        .map(|e| (e, e.record.first_posted(e.comment.created_at)))
        .collect();
    let newest = posted.iter().map(|(_, t)| *t).max()?;
    let from = newest - Duration::hours(WINDOW_HOURS);
    // Per pair, in thread order: each checkpoint's phase and time; an end record closes the
    // last phase.
    let mut pairs: BTreeMap<(&str, &str), Steps> = BTreeMap::new();
    for (e, t) in &posted {
        if e.fenced {
            continue;
        }
        let step = match &e.record.payload {
            Payload::Checkpoint { phase, .. } => Some(phase.as_str()),
            Payload::End { .. } => None,
            Payload::Health { .. } | Payload::Takeover { .. } => continue,
        };
        pairs
            .entry((e.record.agent.as_str(), e.record.session.as_str()))
            .or_default()
            .push((step, *t));
    }
    let mut sections: Vec<(DateTime<Utc>, String, Vec<Task>)> = pairs
        .into_iter()
        .filter_map(|((agent, session), steps)| {
            let tasks = tasks(&steps, from, newest);
            // A pair with no record in the window is not drawn (the table shows it stalled).
            let last = steps.iter().map(|(_, t)| *t).max()?;
            let name = format!("{} · {}", label(agent), label(session));
            (last >= from && !tasks.is_empty()).then_some((last, name, tasks))
        })
        .collect();
    if sections.is_empty() {
        return None;
    }
    // The most recently active sections, then drawn by name so the order is stable.
    sections.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    sections.truncate(MAX_SECTIONS);
    sections.sort_by(|a, b| a.1.cmp(&b.1));
    let mut out = String::from("```mermaid\ngantt\n");
    out.push_str(&format!(
        "    title Phases in the {WINDOW_HOURS} h before the newest record (UTC)\n"
    ));
    out.push_str("    dateFormat YYYY-MM-DDTHH:mm:ss\n    axisFormat %H:%M\n");
    for (_, name, tasks) in sections {
        out.push_str(&format!("    section {name}\n"));
        for t in tasks {
            out.push_str(&format!(
                "    {} :{}, {}\n",
                task_label(&t.phase),
                t.start.format("%Y-%m-%dT%H:%M:%S"),
                t.end.format("%Y-%m-%dT%H:%M:%S")
            ));
        }
    }
    out.push_str("```\n");
    Some(out)
}

/// The bars of one pair: each phase lasts until the pair's next record (its last one until the
/// newest record of the thread, or its end record), cut to the window; a repeated phase is one
/// bar; a bar is at least a minute long, so it shows.
fn tasks(steps: &Steps, from: DateTime<Utc>, to: DateTime<Utc>) -> Vec<Task> {
    let mut out: Vec<Task> = Vec::new();
    for (i, (step, start)) in steps.iter().enumerate() {
        let Some(phase) = step else { continue };
        let end = steps.get(i + 1).map_or(to, |(_, t)| *t).max(*start);
        if end < from {
            continue;
        }
        let start = (*start).max(from);
        match out.last_mut() {
            Some(prev) if prev.phase == *phase && prev.end >= start => prev.end = end,
            _ => out.push(Task {
                phase: phase.to_string(),
                start,
                end,
            }),
        }
    }
    for t in &mut out {
        t.end = t.end.max(t.start + Duration::minutes(1));
    }
    let skip = out.len().saturating_sub(MAX_TASKS);
    out.drain(..skip);
    out
}

/// A name as mermaid may show it: letters, digits, spaces and `_ - . / ( )`, everything else an
/// underscore (no `:` or `,` to end a task's name, no `#`, `;` or `%` to start a comment or an
/// entity, no backtick to close the block, no `<` or `&` for markup), at most [`MAX_LABEL`]
/// characters, never empty.
fn label(text: &str) -> String {
    let clean: String = text
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, ' ' | '_' | '-' | '.' | '/' | '(' | ')') {
                c
            } else {
                '_'
            }
        })
        .take(MAX_LABEL)
        .collect();
    let clean = clean.trim();
    if clean.is_empty() {
        "_".to_string()
    } else {
        clean.to_string()
    }
}

/// A task's name: [`label`], set apart with `phase ` unless it begins with a letter and with no
/// keyword. Mermaid's gantt lexer takes a keyword at the start of a line even when a letter or
/// a `-` follows it (`gantt-2`, `accDescription`), and a leading date as the task's start, so
/// the test is a prefix, not a word.
fn task_label(phase: &str) -> String {
    let l = label(phase);
    let lower = l.to_lowercase();
    let plain = l.starts_with(char::is_alphabetic)
        && !KEYWORDS.split_whitespace().any(|k| lower.starts_with(k));
    if plain { l } else { format!("phase {l}") }
}
