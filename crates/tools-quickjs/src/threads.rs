//! The engine threads: a run's thread is kept for a while after its run, for the next run
//! that asks for the same stack.
//!
//! Starting and ending an OS thread with the engine's stack took 70–76 µs on the reference
//! machine, a fifth of a `return 100` run (scenario f4), and more when the machine is
//! busy: in one slow period, criterion had f4 at 581–608 µs with a thread per run and
//! 347–365 µs with this pool, f3 (100 awaited sub-calls) at 1.38–1.47 ms and 0.97–1.04 ms.
//! A first version was reverted because f3 doubled with it; the cause was the host side's
//! wait for the engine's next event, which held its core without giving it away (see
//! `EVENT_SPIN` in `mod.rs`): a fresh thread usually started on the other core, a reused
//! one could be woken on the waiting task's. A thread that has finished its
//! run waits [`KEEP_ALIVE`] for another, then ends; at most [`MAX_IDLE`] threads wait at
//! once. Nothing of a run outlives it on its thread: the engine (runtime, context and
//! every value) is created and freed inside the run's job, and the thread holds no other
//! state. A thread whose run is stuck never comes back: it is only reused once its job has
//! returned, and a job that panics ends its thread.
//!
//! This is a small pool of its own because it needs what general pools do not offer
//! together: a stack size per thread (the engine's limit plus slack, set per runtime), a
//! thread that ends after an idle period, and no async runtime (the thread blocks on its
//! job's channels).

use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use crate::engine::ExitSignal;

/// How long a thread waits for another run before it ends.
const KEEP_ALIVE: Duration = Duration::from_secs(5);

/// The most threads waiting at once; a thread finishing its run beyond them ends.
const MAX_IDLE: usize = 8;

/// The name of an engine thread while it runs a job (the kernel keeps its first 15 bytes).
const BUSY_NAME: &std::ffi::CStr = c"codemode-quickjs";

/// The kernel's name of an engine thread while it waits for a job, so that whoever lists
/// the process's threads (a debugger, `top -H`, the stop tests) tells a thread running a
/// program from one waiting for the next (Linux; elsewhere the name stays).
const IDLE_NAME: &std::ffi::CStr = c"codemode-idle";

/// Renames the calling thread for the kernel (not for `std::thread::current().name()`).
fn rename(name: &std::ffi::CStr) {
    #[cfg(target_os = "linux")]
    {
        // Best effort: a thread keeps its old name when the kernel refuses.
        let _ = nix::sys::prctl::set_name(name);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = name;
}

/// A run's work on its thread. What it returns is dropped once the thread is listed for
/// the next run (or is about to end): the run's exit signal, so that a caller who starts
/// another run as soon as one is over finds the thread waiting.
pub(super) type Job<D> = Box<dyn FnOnce() -> D + Send + 'static>;

/// A thread waiting for a job.
struct Idle<D> {
    /// Which thread (to find itself again when its wait ends).
    id: u64,
    /// The stack size the thread was made with.
    stack: usize,
    /// Where its next job goes (the thread holds the only receiver).
    jobs: Sender<Job<D>>,
}

/// The process's pool of engine threads.
pub(super) fn engine_pool() -> &'static Arc<Pool<ExitSignal>> {
    static POOL: OnceLock<Arc<Pool<ExitSignal>>> = OnceLock::new();
    POOL.get_or_init(|| Pool::new(KEEP_ALIVE, MAX_IDLE))
}

/// Waiting threads and the policy they follow.
pub(super) struct Pool<D> {
    idle: Mutex<Vec<Idle<D>>>,
    next_id: Mutex<u64>,
    keep_alive: Duration,
    max_idle: usize,
}

impl<D: 'static> Pool<D> {
    /// A pool whose threads wait `keep_alive` for a job, at most `max_idle` at once.
    fn new(keep_alive: Duration, max_idle: usize) -> Arc<Pool<D>> {
        Arc::new(Pool {
            idle: Mutex::new(Vec::new()),
            next_id: Mutex::new(0),
            keep_alive,
            max_idle,
        })
    }

    fn idle(&self) -> std::sync::MutexGuard<'_, Vec<Idle<D>>> {
        // The list stays consistent whatever a panicking holder did: entries are only
        // pushed and removed whole.
        self.idle.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `job` on a waiting thread with a stack of `stack` bytes, or on a new one.
    ///
    /// # Errors
    ///
    /// The error of spawning a new thread (the job is dropped).
    pub(super) fn run(self: &Arc<Pool<D>>, stack: usize, job: Job<D>) -> std::io::Result<()> {
        let mut job = job;
        loop {
            let waiting = {
                let mut idle = self.idle();
                // The most recently idle thread first: its stack and caches are warm.
                let position = idle.iter().rposition(|thread| thread.stack == stack);
                position.map(|position| idle.swap_remove(position))
            };
            let Some(thread) = waiting else {
                return self.spawn(stack, job);
            };
            match thread.jobs.send(job) {
                Ok(()) => return Ok(()),
                // The thread is gone (its job panicked after it was listed, which cannot
                // happen, or it ended): try the next one.
                Err(mpsc::SendError(returned)) => job = returned,
            }
        }
    }

    fn spawn(self: &Arc<Pool<D>>, stack: usize, job: Job<D>) -> std::io::Result<()> {
        let id = {
            let mut next = self.next_id.lock().unwrap_or_else(PoisonError::into_inner);
            *next = next.wrapping_add(1);
            *next
        };
        let pool = Arc::clone(self);
        std::thread::Builder::new()
            .name(BUSY_NAME.to_string_lossy().into_owned())
            .stack_size(stack)
            .spawn(move || pool.serve(id, stack, job))
            .map(drop)
    }

    /// A thread's life: its first job, then each job it is given while it waits.
    fn serve(&self, id: u64, stack: usize, first: Job<D>) {
        let mut job = first;
        loop {
            let done = job();
            let (jobs, next) = mpsc::channel();
            rename(IDLE_NAME);
            {
                let mut idle = self.idle();
                if idle.len() >= self.max_idle {
                    return;
                }
                idle.push(Idle { id, stack, jobs });
            }
            drop(done);
            job = match next.recv_timeout(self.keep_alive) {
                Ok(next) => next,
                Err(RecvTimeoutError::Disconnected) => return,
                Err(RecvTimeoutError::Timeout) => {
                    let mut idle = self.idle();
                    if let Some(position) = idle.iter().position(|thread| thread.id == id) {
                        idle.swap_remove(position);
                        return;
                    }
                    drop(idle);
                    // Taken while the wait ended: its job is on the way (or the taker
                    // dropped the sender, and the thread ends).
                    match next.recv() {
                        Ok(next) => next,
                        Err(_) => return,
                    }
                }
            };
            rename(BUSY_NAME);
        }
    }

    /// How many threads are waiting (for the tests).
    #[cfg(test)]
    fn waiting(&self) -> usize {
        self.idle().len()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use std::thread::ThreadId;

    use super::*;

    const STACK: usize = 256 * 1024;

    /// Runs a job that reports its thread, and waits for the report.
    fn thread_of(pool: &Arc<Pool<()>>, stack: usize) -> ThreadId {
        let (tx, rx) = mpsc::channel();
        pool.run(
            stack,
            Box::new(move || {
                let _ = tx.send(std::thread::current().id());
            }),
        )
        .unwrap();
        rx.recv().unwrap()
    }

    /// Waits until `n` threads wait (the thread lists itself after its job returns).
    fn until_waiting(pool: &Pool<()>, n: usize) {
        while pool.waiting() != n {
            std::thread::yield_now();
        }
    }

    #[test]
    fn a_thread_that_finished_its_run_takes_the_next_one() {
        let pool = Pool::<()>::new(Duration::from_secs(600), 4);
        let first = thread_of(&pool, STACK);
        until_waiting(&pool, 1);
        let second = thread_of(&pool, STACK);
        assert_eq!(first, second);
        until_waiting(&pool, 1);
    }

    /// The kernel's name of the thread with this `tid`.
    #[cfg(target_os = "linux")]
    fn kernel_name(tid: i32) -> String {
        std::fs::read_to_string(format!("/proc/self/task/{tid}/comm"))
            .unwrap()
            .trim_end()
            .to_owned()
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_waiting_thread_is_named_apart_from_a_running_one() {
        let pool = Pool::<()>::new(Duration::from_secs(600), 4);
        let tid_of = |pool: &Arc<Pool<()>>| {
            let (tx, rx) = mpsc::channel();
            pool.run(
                STACK,
                Box::new(move || {
                    let tid = nix::unistd::gettid().as_raw();
                    let _ = tx.send((tid, kernel_name(tid)));
                }),
            )
            .unwrap();
            rx.recv().unwrap()
        };
        let (tid, name) = tid_of(&pool);
        assert_eq!(name, "codemode-quickj");
        until_waiting(&pool, 1);
        assert_eq!(kernel_name(tid), "codemode-idle");
        // Reused, it is named as running again.
        assert_eq!(tid_of(&pool), (tid, name));
    }

    /// Sends its thread's id when dropped.
    struct Notify(mpsc::Sender<ThreadId>, ThreadId);

    impl Drop for Notify {
        fn drop(&mut self) {
            let _ = self.0.send(self.1);
        }
    }

    #[test]
    fn a_job_is_done_only_once_its_thread_waits_for_the_next() {
        let pool = Pool::<Notify>::new(Duration::from_secs(600), 4);
        let run = |pool: &Arc<Pool<Notify>>| {
            let (tx, rx) = mpsc::channel();
            pool.run(
                STACK,
                Box::new(move || Notify(tx, std::thread::current().id())),
            )
            .unwrap();
            rx.recv().unwrap()
        };
        // No waiting between runs: each starts the moment the last one is done.
        let first = run(&pool);
        for _ in 0..20 {
            assert_eq!(run(&pool), first);
        }
    }

    #[test]
    fn a_run_asking_for_another_stack_gets_another_thread() {
        let pool = Pool::<()>::new(Duration::from_secs(600), 4);
        let first = thread_of(&pool, STACK);
        until_waiting(&pool, 1);
        let other = thread_of(&pool, STACK * 2);
        assert_ne!(first, other);
        until_waiting(&pool, 2);
        assert_eq!(thread_of(&pool, STACK), first);
    }

    thread_local! {
        /// Dropped when its thread ends: the receiver then sees the channel disconnect.
        static ON_EXIT: std::cell::RefCell<Option<mpsc::Sender<()>>> =
            const { std::cell::RefCell::new(None) };
    }

    /// A channel that disconnects when the thread calling `watch` ends.
    fn watch(tx: mpsc::Sender<()>) {
        ON_EXIT.with(|slot| *slot.borrow_mut() = Some(tx));
    }

    /// Whether the watched thread has ended, waiting for it at most a minute (a bound on a
    /// hang, not a timing the test relies on).
    fn ended(rx: &mpsc::Receiver<()>) -> bool {
        matches!(
            rx.recv_timeout(Duration::from_secs(60)),
            Err(RecvTimeoutError::Disconnected)
        )
    }

    #[test]
    fn a_waiting_thread_ends_after_its_keep_alive() {
        let pool = Pool::<()>::new(Duration::from_millis(1), 4);
        let (tx, rx) = mpsc::channel::<()>();
        pool.run(STACK, Box::new(move || watch(tx))).unwrap();
        assert!(ended(&rx));
        assert_eq!(pool.waiting(), 0);
    }

    #[test]
    fn no_more_threads_wait_than_the_cap() {
        let pool = Pool::<()>::new(Duration::from_secs(600), 1);
        // Two jobs at once: each holds its thread until released.
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let release_rx = Arc::new(Mutex::new(release_rx));
        let (started_tx, started_rx) = mpsc::channel::<()>();
        let mut exits = Vec::new();
        for _ in 0..2 {
            let release = Arc::clone(&release_rx);
            let started = started_tx.clone();
            let (exit_tx, exit_rx) = mpsc::channel::<()>();
            exits.push(exit_rx);
            pool.run(
                STACK,
                Box::new(move || {
                    watch(exit_tx);
                    let _ = started.send(());
                    let _ = release.lock().unwrap().recv();
                }),
            )
            .unwrap();
        }
        started_rx.recv().unwrap();
        started_rx.recv().unwrap();
        release_tx.send(()).unwrap();
        release_tx.send(()).unwrap();
        // One thread ends (it found the list full) and the other waits.
        let mut ended = 0;
        while ended == 0 {
            ended = exits
                .iter()
                .filter(|rx| matches!(rx.try_recv(), Err(mpsc::TryRecvError::Disconnected)))
                .count();
            std::thread::yield_now();
        }
        assert_eq!(ended, 1);
        until_waiting(&pool, 1);
    }

    #[test]
    fn a_job_that_panics_ends_its_thread_and_the_pool_goes_on() {
        let pool = Pool::<()>::new(Duration::from_secs(600), 4);
        let (tx, rx) = mpsc::channel::<()>();
        pool.run(
            STACK,
            Box::new(move || {
                let _keep = tx;
                panic!("a job that panics");
            }),
        )
        .unwrap();
        assert!(rx.recv().is_err());
        assert_eq!(pool.waiting(), 0);
        let next = thread_of(&pool, STACK);
        until_waiting(&pool, 1);
        assert_eq!(thread_of(&pool, STACK), next);
    }
}
