//! `resume-map`: an agent's table of phases and resume points.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Context, Run, Spec, Verb};
use crate::error::Result;

/// `resume-map`: whose phase table.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct ResumeMapRequest {
    /// The agent whose phase table to return.
    #[serde(default = "default_agent")]
    #[cfg_attr(feature = "cli", arg(long, default_value = RESUME_MAP_AGENT))]
    pub agent: String,
}

/// The agent `resume-map` describes when the request names none.
pub const RESUME_MAP_AGENT: &str = "implementation-worker";

fn default_agent() -> String {
    RESUME_MAP_AGENT.to_string()
}

/// What `resume-map` answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ResumeMapAnswer {
    /// The agent.
    pub agent: String,
    /// The resume point of any phase the table does not name.
    pub default: String,
    /// Phase (a glob) to resume point.
    pub phases: BTreeMap<String, String>,
}

/// Resume map.
pub struct ResumeMapVerb;

impl Verb for ResumeMapVerb {
    type Request = ResumeMapRequest;
    type Answer = ResumeMapAnswer;
    const DECLARED: Spec = Spec {
        name: "resume-map",
        title: "An agent's phase table",
        description: "The phase table an agent resumes by (the configured resume map): each \
            phase glob and the resume point it maps to, and the default for any other phase.",
        example: r#"{"agent": "w"}"#,
        about: "Print the phase table an agent resumes by (the resume map as configured)",
        examples: "  forgestate resume-map
  forgestate resume-map --agent pr-self-reviewer --json",
        ..Spec::PURE
    };
}

impl Run for ResumeMapVerb {
    async fn run(ctx: &Context<'_>, r: ResumeMapRequest) -> Result<ResumeMapAnswer> {
        let map = ctx.client.resume_map();
        Ok(ResumeMapAnswer {
            phases: map.phases(&r.agent),
            default: map.default_point().to_string(),
            agent: r.agent,
        })
    }
}

#[cfg(feature = "cli")]
impl super::cli::Command for ResumeMapVerb {
    type Flags = ResumeMapRequest;

    /// `phase -> point` lines, then the default.
    fn show(_: &ResumeMapRequest, map: ResumeMapAnswer, p: &impl super::cli::Printer) -> u8 {
        p.answer(&map, |map| {
            let mut text: Vec<String> = map
                .phases
                .iter()
                .map(|(phase, point)| format!("{phase} -> {point}"))
                .collect();
            text.push(format!("(any other phase) -> {}", map.default));
            text.join("\n")
        })
    }
}
