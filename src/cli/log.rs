//! How log events look on stderr: warnings and errors as one `forgestate: warning: ...` line,
//! like every other note the command prints; debug and trace lines (`-v`) keep time and level.

use std::fmt;

use tracing::{Event, Level, Subscriber};
use tracing_subscriber::fmt::format::{self, FormatEvent, FormatFields, Writer};
use tracing_subscriber::fmt::{FmtContext, FormattedFields};
use tracing_subscriber::registry::LookupSpan;

/// The event format of the CLI's subscriber.
pub struct Format {
    detailed: format::Format,
}

impl Default for Format {
    fn default() -> Self {
        Format {
            detailed: format::Format::default().with_target(false),
        }
    }
}

impl<S, N> FormatEvent<S, N> for Format
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
        let label = match *event.metadata().level() {
            Level::WARN => "warning",
            Level::ERROR => "error",
            _ => return self.detailed.format_event(ctx, writer, event),
        };
        write!(writer, "forgestate: {label}: ")?;
        ctx.field_format().format_fields(writer.by_ref(), event)?;
        // Keep span fields (none today) rather than dropping them silently.
        if let Some(scope) = ctx.event_scope() {
            for span in scope.from_root() {
                if let Some(fields) = span.extensions().get::<FormattedFields<N>>()
                    && !fields.is_empty()
                {
                    write!(writer, " ({fields})")?;
                }
            }
        }
        writeln!(writer)
    }
}
