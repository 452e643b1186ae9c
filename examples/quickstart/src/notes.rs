//! `write_note` (exclusive, gated by approval) and the approval service that asks the user.

use super::*;

// ---------------------------------------------------------------------------------------
// write_note: exclusive, and gated by approval
// ---------------------------------------------------------------------------------------

/// The arguments of `write_note`.
#[derive(Debug, Deserialize, ToolArgs)]
pub(crate) struct NoteArgs {
    /// The note.
    text: String,
}

/// The session's notes (in memory; the example never writes to the file system).
pub(crate) type Notes = Arc<Mutex<Vec<String>>>;

pub(crate) fn write_note_tool(notes: &Notes) -> Result<ToolDefinition, RegistryError> {
    let notes = Arc::clone(notes);
    define_tool::<NoteArgs, String>("write_note", "Append a note to the session's notes.")
        .body(move |args: NoteArgs, _ctx: RunContext| {
            let notes = Arc::clone(&notes);
            async move {
                let mut notes = notes.lock().unwrap_or_else(PoisonError::into_inner);
                notes.push(args.text);
                Ok(format!("note #{} saved", notes.len()))
            }
        })
        // No concurrency classifier: the tool is exclusive and runs alone in a batch.
        .presenter(WriteNotePresenter)
        .build()
}

/// The call card of `write_note`; its result gets the generic card.
pub(crate) struct WriteNotePresenter;

impl TypedPresenter for WriteNotePresenter {
    type Args = NoteArgs;

    fn present_call(&self, args: &NoteArgs) -> Option<ToolCallView> {
        let view = GenericCallView::new(format!("Write a note: {}", shorten_line(&args.text, 40)))
            .with_kind(ToolCallKind::Edit)
            .with_raw_input(json!(args.text));
        Some(view.into())
    }
}

/// A question for the user, sent by the approval service to the loop that owns the
/// terminal (the "UI"), with the channel its answer goes back on.
pub(crate) type Question = (ApprovalRequest, oneshot::Sender<ApprovalOutcome>);

/// The approval service: hands each question to the UI loop and waits for its answer.
/// Asking through the UI keeps the question after every event printed before it.
pub(crate) fn approval_service(
    questions: mpsc::UnboundedSender<Question>,
) -> impl Fn(ApprovalRequest) -> BoxedOutcome + Send + Sync + 'static {
    move |request: ApprovalRequest| {
        let (reply, answer) = oneshot::channel();
        let sent = questions.send((request, reply)).is_ok();
        Box::pin(async move {
            // No UI (it is gone) means nobody can answer.
            Ok(match sent {
                true => answer.await.unwrap_or(ApprovalOutcome::Unavailable),
                false => ApprovalOutcome::Unavailable,
            })
        })
    }
}

pub(crate) type BoxedOutcome =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<ApprovalOutcome, ToolError>> + Send>>;

/// The UI's side: asks `y/N` on the terminal, or denies when stdin is not one (CI, a pipe,
/// `</dev/null`), saying so.
pub(crate) async fn ask_user(request: &ApprovalRequest) -> ApprovalOutcome {
    let reason = request.reason.as_deref().unwrap_or("no reason given");
    if !std::io::stdin().is_terminal() {
        println!(
            "   [approval] {} ({}) asks for approval ({reason}); stdin is not a terminal, \
             so it is denied automatically",
            request.tool, request.call_id
        );
        return ApprovalOutcome::Unavailable;
    }
    let question = format!(
        "   [approval] allow {} ({})? {reason} [y/N] ",
        request.tool, request.call_id
    );
    let answer = tokio::task::spawn_blocking(move || {
        let mut stdout = std::io::stdout().lock();
        write!(stdout, "{question}")?;
        stdout.flush()?;
        let mut line = String::new();
        std::io::stdin().read_line(&mut line)?;
        Ok::<String, std::io::Error>(line)
    })
    .await;
    match answer {
        Ok(Ok(line)) if matches!(line.trim(), "y" | "Y" | "yes") => ApprovalOutcome::AllowedOnce,
        Ok(Ok(_)) => ApprovalOutcome::Rejected,
        Ok(Err(_)) | Err(_) => ApprovalOutcome::Unavailable,
    }
}
