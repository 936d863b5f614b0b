//! Log lines in forgestate's one message style: `forgestate: warning: ...`, `forgestate: error:
//! ...`, and, under `-v`, `forgestate: debug: HH:MM:SS.mmm ...`.

use std::fmt;

use tracing::{Event, Level, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

use super::table;

/// The event format for the CLI's subscriber.
pub struct Prefixed;

impl<S, N> FormatEvent<S, N> for Prefixed
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let level = *event.metadata().level();
        let name = match level {
            Level::WARN => "warning".to_string(),
            level => level.as_str().to_ascii_lowercase(),
        };
        write!(
            writer,
            "{}",
            table::prefix(&name, writer.has_ansi_escapes())
        )?;
        if level >= Level::DEBUG {
            // Timing matters when reading retries and backoff.
            write!(writer, "{} ", chrono::Utc::now().format("%H:%M:%S%.3f"))?;
        }
        // Fields are formatted apart, so a secret in them (a URL with a password) is scrubbed.
        let mut fields = String::new();
        ctx.field_format()
            .format_fields(Writer::new(&mut fields), event)?;
        writeln!(writer, "{}", crate::face::scrub::scrub(&fields))
    }
}
