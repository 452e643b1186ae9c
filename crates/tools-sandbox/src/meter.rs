//! The meter of a run's processes: their busy time and resident memory, read from `/proc`
//! (the run's own view of it when sandboxed, so children count too).

use std::path::PathBuf;

/// Busy time of one process (all its threads, and the children it has reaped), from
/// `/proc/<pid>/stat`, in milliseconds; `None` once the process is gone or the file cannot
/// be read.
pub(crate) fn cpu_millis(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat_cpu_millis(&stat)
}

/// utime + stime + cutime + cstime of one `stat` line, in milliseconds.
fn stat_cpu_millis(stat: &str) -> Option<u64> {
    // The command name may hold spaces and parentheses: fields start after the last `)`.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_ascii_whitespace();
    // After `)`: state is field 3 of the whole line; utime, stime, cutime and cstime are
    // fields 14 to 17.
    let mut ticks: u64 = 0;
    for value in [
        fields.nth(11)?,
        fields.next()?,
        fields.next()?,
        fields.next()?,
    ] {
        ticks = ticks.saturating_add(value.parse().ok()?);
    }
    // Linux reports these in USER_HZ, which is 100 on every architecture it supports.
    Some(ticks.saturating_mul(10))
}

/// What the processes of one sandbox use together.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct TreeUsage {
    /// Busy time of every process alive in the sandbox, with what each has reaped.
    pub(crate) cpu_millis: u64,
    /// How many processes are alive (zombies included).
    pub(crate) processes: u32,
    /// Resident anonymous and shared memory (`RssAnon` + `RssShmem`) summed over the
    /// processes; read only when there is more than one (a single process is held by its
    /// address-space limit). Pages a fork shares copy-on-write count once per process.
    pub(crate) resident_bytes: u64,
}

/// The usage of the whole sandbox whose pid 1 is host pid `pid`: read through the
/// sandbox's own `/proc` (`/proc/<pid>/root/proc`), which lists exactly the processes of
/// its pid namespace. `None` when that view cannot be read (the run has ended).
pub(crate) fn tree_usage(pid: u32) -> Option<TreeUsage> {
    let proc_dir = PathBuf::from(format!("/proc/{pid}/root/proc"));
    let entries = std::fs::read_dir(&proc_dir).ok()?;
    let mut pids: Vec<std::ffi::OsString> = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.is_empty() && name.as_encoded_bytes().iter().all(u8::is_ascii_digit) {
            pids.push(name);
        }
    }
    let mut usage = TreeUsage {
        processes: u32::try_from(pids.len()).unwrap_or(u32::MAX),
        ..TreeUsage::default()
    };
    let mut path = proc_dir;
    for name in &pids {
        path.push(name);
        path.push("stat");
        if let Some(busy) = std::fs::read_to_string(&path)
            .ok()
            .as_deref()
            .and_then(stat_cpu_millis)
        {
            usage.cpu_millis = usage.cpu_millis.saturating_add(busy);
        }
        if pids.len() > 1 {
            path.set_file_name("status");
            if let Ok(status) = std::fs::read_to_string(&path) {
                usage.resident_bytes = usage.resident_bytes.saturating_add(resident(&status));
            }
        }
        path.pop();
        path.pop();
    }
    Some(usage)
}

/// `RssAnon` + `RssShmem` of one `status` file, in bytes.
fn resident(status: &str) -> u64 {
    let mut bytes: u64 = 0;
    for line in status.lines() {
        let Some(rest) = line
            .strip_prefix("RssAnon:")
            .or_else(|| line.strip_prefix("RssShmem:"))
        else {
            continue;
        };
        let kib: u64 = rest
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .unwrap_or(0);
        bytes = bytes.saturating_add(kib.saturating_mul(1024));
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_odd_names_parse() {
        let line = "42 (a) b (c)) S 1 42 42 0 -1 4194560 100 0 0 0 7 3 2 1 20 0 1 0 5 0 0";
        assert_eq!(stat_cpu_millis(line), Some(130));
        assert_eq!(stat_cpu_millis("42 (x) S 1"), None);
        assert_eq!(stat_cpu_millis("no paren"), None);
    }

    #[test]
    fn resident_memory_sums_anonymous_and_shared() {
        let status =
            "Name:\tpython3\nRssAnon:\t    1024 kB\nRssFile:\t 9999 kB\nRssShmem:\t       2 kB\n";
        assert_eq!(resident(status), 1026 * 1024);
        assert_eq!(resident("RssAnon: junk kB\n"), 0);
    }

    #[test]
    fn the_tree_of_a_process_without_its_own_namespace_is_the_hosts_view() {
        // Our own root is the host's: the view lists many processes, ourselves among them.
        let usage = tree_usage(std::process::id()).unwrap();
        assert!(usage.processes >= 1);
        assert_eq!(tree_usage(u32::MAX), None);
    }

    #[test]
    fn the_own_cpu_time_reads() {
        assert!(cpu_millis(std::process::id()).is_some());
        assert_eq!(cpu_millis(u32::MAX), None);
    }
}
