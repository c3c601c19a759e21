//! A file that shrinks under a map (feature `mmap`): one line naming the file and exit status 1
//! instead of death by `SIGBUS` with no message.
//!
//! When another process truncates a file that is memory-mapped, the pages past the new end are
//! gone, and the next read of one of them raises `SIGBUS` in the reading thread; by default the
//! process dies by that signal (shell status 135) without a word. Each [`MappedMatrix`]
//! registers its range (address, length and a message naming its file, formatted when it is
//! mapped) in a fixed table of [`SLOTS`] atomic slots and removes it when it is dropped.
//! [`install_sigbus_handler`] installs, once, a `SIGBUS` handler (`sigaction` with
//! `SA_SIGINFO`) that looks the faulting address (`si_addr`) up in the table without a lock
//! or an allocation: inside a registered range it writes the message with `write(2)` to
//! standard error and ends the process with `_exit(1)` (both async-signal-safe); anywhere else
//! the fault is not the map's, so it reinstalls the disposition it replaced and returns, and the
//! faulting access raises the signal again under that disposition (Rust's own handler, then the
//! default: the process dies by the signal as it would have).
//!
//! A library should not take over a process-wide signal on its own, so the handler is opt-in:
//! the `privpref` binary installs it at start-up; a program that maps files and wants the
//! message calls [`install_sigbus_handler`] itself. Without it the registry is kept all the
//! same (a few atomic stores per map) and a truncation kills the process by `SIGBUS`, as
//! before. The handler exists on Linux only (elsewhere [`install_sigbus_handler`] returns
//! `false`). More than [`SLOTS`] maps alive at once: the extra ones are not registered and a
//! truncation under them is the plain `SIGBUS`. A message longer than [`MESSAGE_BYTES`] keeps
//! the end of the path.
//!
//! [`MappedMatrix`]: super::MappedMatrix

use std::path::Path;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

/// Mapped ranges that can be registered at once.
pub const SLOTS: usize = 64;
/// The longest message a slot holds, in bytes (the newline included).
pub const MESSAGE_BYTES: usize = 1024;

const FREE: usize = 0;
const WRITING: usize = 1;
const LIVE: usize = 2;

/// One registered range: written by [`register`] while `state` is `WRITING`, read by the
/// handler only while it is `LIVE`. Every field is atomic, so a concurrent read and write is
/// never undefined behaviour (at worst a message of a range being replaced, which the handler
/// detects by reading `state` and `start` again).
struct Slot {
    state: AtomicUsize,
    start: AtomicUsize,
    len: AtomicUsize,
    msg_len: AtomicUsize,
    msg: [AtomicU8; MESSAGE_BYTES],
}

#[allow(clippy::declare_interior_mutable_const)] // the initialiser of each array element
const EMPTY: Slot = Slot {
    state: AtomicUsize::new(FREE),
    start: AtomicUsize::new(0),
    len: AtomicUsize::new(0),
    msg_len: AtomicUsize::new(0),
    msg: [const { AtomicU8::new(0) }; MESSAGE_BYTES],
};

static TABLE: [Slot; SLOTS] = [EMPTY; SLOTS];

/// The one-line message for a truncation of the file at `path`, newline included, at most
/// [`MESSAGE_BYTES`] bytes (a longer path keeps its end, after `…`).
pub(super) fn message(path: &Path) -> Vec<u8> {
    const HEAD: &str = "privpref: ";
    const TAIL: &str = ": the file shrank while it was memory-mapped (truncated by another process); \
                        its data are gone\n";
    let p = path.display().to_string();
    let room = MESSAGE_BYTES - HEAD.len() - TAIL.len();
    let p = if p.len() <= room {
        p
    } else {
        let mut cut = p.len() - (room - '…'.len_utf8());
        while !p.is_char_boundary(cut) {
            cut += 1;
        }
        format!("…{}", &p[cut..])
    };
    format!("{HEAD}{p}{TAIL}").into_bytes()
}

/// A registered range; dropping it removes the range from the table.
#[derive(Debug)]
pub(super) struct Registration {
    slot: usize,
}

impl Drop for Registration {
    fn drop(&mut self) {
        TABLE[self.slot].state.store(FREE, Ordering::Release);
    }
}

/// Registers the mapped bytes `start .. start + len` of the file at `path`; `None` when all
/// [`SLOTS`] are taken (the range is then not covered) or the range is empty.
pub(super) fn register(start: usize, len: usize, path: &Path) -> Option<Registration> {
    if len == 0 {
        return None;
    }
    let msg = message(path);
    let slot = TABLE.iter().position(|s| {
        s.state
            .compare_exchange(FREE, WRITING, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    })?;
    let s = &TABLE[slot];
    s.start.store(start, Ordering::Relaxed);
    s.len.store(len, Ordering::Relaxed);
    for (to, &b) in s.msg.iter().zip(&msg) {
        to.store(b, Ordering::Relaxed);
    }
    s.msg_len.store(msg.len(), Ordering::Relaxed);
    s.state.store(LIVE, Ordering::Release);
    Some(Registration { slot })
}

/// Copies into `out` the message of the registered range that holds the address `addr` and
/// returns its length; `None` when no registered range holds it. Lock-free and allocation-free:
/// the signal handler calls it.
pub(super) fn lookup(addr: usize, out: &mut [u8; MESSAGE_BYTES]) -> Option<usize> {
    for s in &TABLE {
        if s.state.load(Ordering::Acquire) != LIVE {
            continue;
        }
        let (start, len) = (s.start.load(Ordering::Relaxed), s.len.load(Ordering::Relaxed));
        if addr < start || addr - start >= len {
            continue;
        }
        let n = s.msg_len.load(Ordering::Relaxed).min(MESSAGE_BYTES);
        for (to, from) in out.iter_mut().zip(&s.msg).take(n) {
            *to = from.load(Ordering::Relaxed);
        }
        // The range was not replaced while it was read.
        if s.state.load(Ordering::Acquire) == LIVE && s.start.load(Ordering::Relaxed) == start {
            return Some(n);
        }
    }
    None
}

/// Installs (once per process) the `SIGBUS` handler that turns a fault inside a registered map
/// into one line on standard error naming the file and `_exit(1)`, and passes any other
/// `SIGBUS` on to the disposition it replaced (see the module docs). Returns whether the
/// handler is installed: `false` off Linux or when `sigaction` refused.
///
/// The handler is process-wide: call this from a program's `main` (the `privpref` binary
/// does), not from a library that others embed.
pub fn install_sigbus_handler() -> bool {
    #[cfg(target_os = "linux")]
    {
        linux::install()
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use super::{lookup, MESSAGE_BYTES};
    use std::sync::OnceLock;

    /// The disposition replaced by ours (read by the handler: a plain load once it is set).
    static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();
    static INSTALLED: OnceLock<bool> = OnceLock::new();

    extern "C" fn on_sigbus(_sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
        // SAFETY: the kernel passes a valid siginfo_t to an SA_SIGINFO handler; `si_addr` is
        // the faulting address for a fault (si_code > 0; a SIGBUS sent by kill/raise has
        // si_code ≤ 0 and is never ours). Only async-signal-safe calls follow: atomic loads,
        // write(2), _exit(2) and sigaction(2).
        unsafe {
            if !info.is_null() && (*info).si_code > 0 {
                let addr = (*info).si_addr() as usize;
                let mut msg = [0u8; MESSAGE_BYTES];
                if let Some(n) = lookup(addr, &mut msg) {
                    let mut at = 0;
                    while at < n {
                        let w = libc::write(2, msg[at..n].as_ptr().cast(), n - at);
                        if w <= 0 {
                            break;
                        }
                        at += w as usize;
                    }
                    libc::_exit(1);
                }
            }
            // Not a fault in a registered map: back to the disposition we replaced, and return;
            // the faulting instruction runs again and raises SIGBUS under it.
            match PREVIOUS.get() {
                Some(prev) => {
                    libc::sigaction(libc::SIGBUS, prev, std::ptr::null_mut());
                }
                None => {
                    libc::signal(libc::SIGBUS, libc::SIG_DFL);
                }
            }
        }
    }

    pub(super) fn install() -> bool {
        *INSTALLED.get_or_init(|| {
            // SAFETY: sigaction with a zeroed, then filled, struct: an SA_SIGINFO handler of
            // the right signature, an empty mask; the old disposition is saved before ours can
            // run (ours is installed by the same call, and PREVIOUS is set right after: a SIGBUS
            // in between falls back to SIG_DFL, the default it would have had).
            unsafe {
                let mut ours: libc::sigaction = std::mem::zeroed();
                let handler: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) = on_sigbus;
                ours.sa_sigaction = handler as libc::sighandler_t;
                ours.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                libc::sigemptyset(&mut ours.sa_mask);
                let mut prev: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(libc::SIGBUS, &ours, &mut prev) != 0 {
                    return false;
                }
                let _ = PREVIOUS.set(prev);
                true
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// The tests share the one table: one at a time.
    static SERIAL: Mutex<()> = Mutex::new(());

    #[test]
    fn a_registered_range_is_found_by_its_addresses_and_only_while_registered() {
        let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        // Addresses far from any real map: the table only compares numbers.
        let (start, len) = (0x7000_0000_0000usize, 4096usize);
        let reg = register(start, len, Path::new("/data/X.npy")).unwrap();
        let mut out = [0u8; MESSAGE_BYTES];
        let want = message(Path::new("/data/X.npy"));
        for addr in [start, start + 1, start + len - 1] {
            let n = lookup(addr, &mut out).expect("inside");
            assert_eq!(&out[..n], &want[..]);
        }
        for addr in [start - 1, start + len, 0, usize::MAX] {
            assert_eq!(lookup(addr, &mut out), None, "{addr:#x}");
        }
        let text = String::from_utf8(want).unwrap();
        assert!(text.starts_with("privpref: /data/X.npy: the file shrank"), "{text}");
        assert_eq!(text.lines().count(), 1);
        drop(reg);
        assert_eq!(lookup(start, &mut out), None);
        assert!(register(start, 0, Path::new("empty")).is_none());
    }

    #[test]
    fn a_full_table_registers_nothing_more_and_frees_slots_on_drop() {
        let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let base = 0x6000_0000_0000usize;
        let mut regs = Vec::new();
        while let Some(r) = register(base + regs.len() * 8192, 4096, Path::new("f.npy")) {
            regs.push(r);
            assert!(regs.len() <= SLOTS);
        }
        assert_eq!(regs.len(), SLOTS);
        let mut out = [0u8; MESSAGE_BYTES];
        assert!(lookup(base + 8192 * (regs.len() - 1), &mut out).is_some());
        regs.pop();
        assert!(register(base, 4096, Path::new("g.npy")).is_some());
    }

    #[test]
    fn a_long_path_keeps_its_end_within_the_limit() {
        let long = format!("/{}/X.npy", "é".repeat(2000));
        let m = message(Path::new(&long));
        assert!(m.len() <= MESSAGE_BYTES, "{}", m.len());
        let text = String::from_utf8(m).unwrap();
        assert!(
            text.contains("…éé") && text.contains("/X.npy: the file shrank"),
            "{text}"
        );
        assert!(text.ends_with("its data are gone\n"));
    }
}
