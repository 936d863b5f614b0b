//! `doctor`: the setup checked, each problem with its fix; the CLI runs it over the
//! configuration.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{CLI, Spec, Verb, answer_schema, request_schema};

/// `doctor` takes nothing.
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DoctorRequest {}

/// What `doctor` answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct DoctorAnswer {
    /// Every check in order: name, status (ok, warn, fail, skip), ok, detail, fix.
    pub checks: Vec<crate::doctor::Check>,
    /// Whether any check failed.
    pub failed: bool,
}

/// Doctor.
pub struct Doctor;

impl Verb for Doctor {
    type Request = DoctorRequest;
    type Answer = DoctorAnswer;
    const SPEC: Spec = Spec {
        name: "doctor",
        title: "Check the setup",
        description: "Check the setup, one check per line with the fix: config, forge, token, \
            repository, label, session issue, clock, trust, outbox, cache.",
        read_only: true,
        faces: CLI,
        example: "{}",
        request: request_schema::<Self::Request>,
        answer: answer_schema::<Self::Answer>,
        ..Spec::OPERATOR
    };
}
