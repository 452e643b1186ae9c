//! The seccomp filter of the sandbox: the system calls no Code Mode runtime needs and that
//! reach kernel state shared with the host, refused with `EPERM` (and `clone3` with
//! `ENOSYS`, so the C library falls back to `clone`, whose flags the filter can read).
//!
//! The filter is compiled once per runtime (by `seccompiler`, the rust-vmm project's BPF
//! compiler) into classic BPF and handed to bubblewrap's `--seccomp` on a pipe for each run;
//! bubblewrap installs it as the last step before it executes the program, so it binds the
//! program and everything it starts, and it cannot be removed.
//!
//! | refused | why |
//! | --- | --- |
//! | `ptrace`, `process_vm_readv`, `process_vm_writev` | reading or steering another process |
//! | `keyctl`, `add_key`, `request_key` | kernel keyrings are keyed by host uid, not by namespace |
//! | `bpf`, `perf_event_open`, `userfaultfd`, `io_uring_*` | large kernel attack surface; `io_uring` also runs operations the filter never sees |
//! | `mount`, `umount2`, `pivot_root`, `chroot`, `fsopen`, `fsmount`, `fsconfig`, `fspick`, `move_mount`, `open_tree`, `mount_setattr` | the file system view is the sandbox's |
//! | `unshare`, `setns`, `clone` with a namespace flag, `clone3` (`ENOSYS`) | new namespaces, a user namespace above all |
//! | `memfd_create`, `memfd_secret`, `shmget`, `msgget` | memory that no process's address-space limit counts |
//! | `open_by_handle_at`, `name_to_handle_at` | opening files by handle, around the mount view |
//! | `kexec_*`, `*_module`, `reboot`, `swapon`, `swapoff`, `acct`, `quotactl`, `syslog`, `lookup_dcookie`, `fanotify_init` | host administration |

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// The namespace flags `clone` may not carry.
const NAMESPACE_FLAGS: [i32; 7] = [
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWNS,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWNET,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWCGROUP,
];

/// The system calls refused outright with `EPERM`.
fn refused() -> Vec<libc::c_long> {
    let mut calls = vec![
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_userfaultfd,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_chroot,
        libc::SYS_fsopen,
        libc::SYS_fsmount,
        libc::SYS_fsconfig,
        libc::SYS_fspick,
        libc::SYS_move_mount,
        libc::SYS_open_tree,
        libc::SYS_mount_setattr,
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_memfd_create,
        libc::SYS_memfd_secret,
        libc::SYS_shmget,
        libc::SYS_msgget,
        libc::SYS_open_by_handle_at,
        libc::SYS_name_to_handle_at,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_reboot,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_acct,
        libc::SYS_quotactl,
        libc::SYS_syslog,
        libc::SYS_lookup_dcookie,
        libc::SYS_fanotify_init,
    ];
    calls.sort_unstable();
    calls.dedup();
    calls
}

/// The compiled filters, as the bytes bubblewrap reads from a `--seccomp` /
/// `--add-seccomp-fd` descriptor (`struct sock_filter` in native byte order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Filters {
    /// Everything but `clone3`: `EPERM`.
    pub(crate) deny: Vec<u8>,
    /// `clone3`: `ENOSYS`, so the C library retries with `clone`.
    pub(crate) no_clone3: Vec<u8>,
}

/// Compiles the filters for this machine's architecture.
///
/// # Errors
///
/// A sentence naming why no filter can be built (an architecture `seccompiler` does not
/// know, or a rule it refuses); the sandbox then fails closed.
pub(crate) fn compile() -> Result<Filters, String> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|e| format!("no seccomp filter for {}: {e}", std::env::consts::ARCH))?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = refused()
        .into_iter()
        .map(|call| (call, Vec::new()))
        .collect();
    let mut clone_rules = Vec::with_capacity(NAMESPACE_FLAGS.len());
    for flag in NAMESPACE_FLAGS {
        let flag = u64::from(flag.unsigned_abs());
        let condition = SeccompCondition::new(
            0,
            SeccompCmpArgLen::Qword,
            SeccompCmpOp::MaskedEq(flag),
            flag,
        )
        .map_err(|e| format!("seccomp clone rule: {e}"))?;
        clone_rules.push(
            SeccompRule::new(vec![condition]).map_err(|e| format!("seccomp clone rule: {e}"))?,
        );
    }
    rules.insert(libc::SYS_clone, clone_rules);
    let deny = program(rules, libc::EPERM, arch)?;
    let no_clone3 = program(
        BTreeMap::from([(libc::SYS_clone3, Vec::new())]),
        libc::ENOSYS,
        arch,
    )?;
    Ok(Filters { deny, no_clone3 })
}

/// One filter: the matched calls fail with `errno`, everything else is allowed.
fn program(
    rules: BTreeMap<i64, Vec<SeccompRule>>,
    errno: i32,
    arch: TargetArch,
) -> Result<Vec<u8>, String> {
    let errno = u32::try_from(errno).map_err(|e| format!("seccomp errno: {e}"))?;
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(errno),
        arch,
    )
    .map_err(|e| format!("seccomp filter: {e}"))?;
    let program: BpfProgram = filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| format!("seccomp filter: {e}"))?;
    let mut bytes = Vec::with_capacity(program.len() * 8);
    for instruction in &program {
        bytes.extend_from_slice(&instruction.code.to_ne_bytes());
        bytes.push(instruction.jt);
        bytes.push(instruction.jf);
        bytes.extend_from_slice(&instruction.k.to_ne_bytes());
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filters_compile_to_whole_instructions() {
        let filters = compile().unwrap();
        assert!(!filters.deny.is_empty() && filters.deny.len().is_multiple_of(8));
        assert!(!filters.no_clone3.is_empty() && filters.no_clone3.len().is_multiple_of(8));
        // Every refused call and the clone rules fit in one classic BPF program (4096).
        assert!(filters.deny.len() / 8 < 4096);
    }

    #[test]
    fn the_refused_list_names_no_call_twice_and_spares_what_runtimes_need() {
        let calls = refused();
        let mut sorted = calls.clone();
        sorted.dedup();
        assert_eq!(calls, sorted);
        for needed in [
            libc::SYS_read,
            libc::SYS_write,
            libc::SYS_mmap,
            libc::SYS_clone,
            libc::SYS_execve,
            libc::SYS_wait4,
            libc::SYS_futex,
        ] {
            assert!(!calls.contains(&needed), "{needed}");
        }
    }
}
