//! What a long-running daemon holds resident without needing it: the pages of code that only
//! its start-up ran, and memory its allocator keeps after it was freed.
//!
//! Both stay counted in the process's resident set although nothing uses them. Start-up
//! touches code scattered across the whole executable (each resource's registration, the
//! schemas, every plugin's set-up), and the kernel maps the neighbours of each touched page
//! too: tens of megabytes of code stay mapped that the serving path never runs again.
//! mimalloc hands freed memory back to the system only when a thread that allocates notices
//! that its delay has passed; a burst of work followed by quiet (an OpenAPI document built on
//! the first request, a load that ended) stays resident for as long as the quiet lasts.

use std::os::unix::fs::MetadataExt;
use std::time::Duration;

/// Unmaps the process's pages of its executable's code, so that only code run from now on is
/// resident again: call it once start-up is over. The pages stay in the page cache (a page
/// the process runs again comes back without reading the disk); only the mapping of this
/// executable's read-only code is touched, and only when none of its pages was ever written
/// (a debugger's breakpoint makes a private copy, which would be lost). Returns the bytes of
/// code unmapped.
pub fn release_startup_code() -> std::io::Result<usize> {
    let exe = Executable::current()?;
    let smaps = std::fs::read_to_string("/proc/self/smaps")?;
    let mut released = 0;
    for mapping in executable_code(&smaps, &exe) {
        #[allow(unsafe_code)]
        // SAFETY: the range is a private, read-only mapping of the executable's file that holds
        // no page of its own (no anonymous pages): every page equals the file's content, so
        // dropping it only makes the next access map it again from the page cache. Other
        // threads running code in the range fault it back in.
        unsafe {
            rustix::mm::madvise(
                mapping.start as *mut std::ffi::c_void,
                mapping.end - mapping.start,
                rustix::mm::Advice::LinuxDontNeed,
            )?;
        }
        released += mapping.resident;
    }
    Ok(released)
}

/// Starts a thread that, every `period`, lets mimalloc (the daemons' global allocator) hand
/// back to the system the memory freed longer ago than its purge delay (1 s), which it
/// otherwise does only when an allocating thread happens to look: a quiet daemon keeps it
/// indefinitely. Memory freed and reused within the delay (the steady state under load) is
/// not touched.
pub fn spawn_allocator_tidy(period: Duration) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("allocator-tidy".into())
        .spawn(move || {
            // `mi_collect` works through the calling thread's heap, which exists once the
            // thread is known to mimalloc.
            #[allow(unsafe_code)]
            // SAFETY: no preconditions; idempotent.
            unsafe {
                libmimalloc_sys::mi_thread_init()
            };
            loop {
                std::thread::sleep(period);
                #[allow(unsafe_code)]
                // SAFETY: `mi_collect` has no preconditions; without `force` it purges only
                // what has waited out mimalloc's delay.
                unsafe {
                    libmimalloc_sys::mi_collect(false)
                };
            }
        })?;
    Ok(())
}

/// Runs `work` on a thread of its own and returns its result: for a burst of short-lived
/// allocations (megabytes of trees built to produce a smaller result), which the allocator
/// takes back with the thread instead of keeping them in the pages of a long-lived one.
pub fn on_own_thread<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| match s.spawn(work).join() {
        Ok(result) => result,
        Err(panic) => std::panic::resume_unwind(panic),
    })
}

/// A mapping found in `/proc/self/smaps`.
#[derive(Debug, PartialEq, Eq)]
struct Mapping {
    start: usize,
    end: usize,
    /// Resident bytes.
    resident: usize,
}

/// This process's executable file, as mappings name it: by device and inode, or by path
/// (on overlay filesystems, as in containers, a mapping may name the layer's device and
/// inode where `stat` names the overlay's).
#[derive(Debug)]
struct Executable {
    dev: u64,
    ino: u64,
    path: String,
}

impl Executable {
    fn current() -> std::io::Result<Self> {
        let meta = std::fs::metadata("/proc/self/exe")?;
        let path = std::fs::read_link("/proc/self/exe")?;
        Ok(Self {
            dev: meta.dev(),
            ino: meta.ino(),
            path: path.to_string_lossy().into_owned(),
        })
    }

    fn is(&self, device: u64, inode: u64, path: &str) -> bool {
        (device == self.dev && inode == self.ino) || path == self.path
    }
}

/// The private, read-only, executable mappings of `exe` in `smaps` that hold no anonymous
/// page.
fn executable_code(smaps: &str, exe: &Executable) -> Vec<Mapping> {
    let mut found = Vec::new();
    // The mapping being read: its range, whether it is the executable's code, its fields.
    let mut current: Option<(usize, usize, bool)> = None;
    let (mut resident, mut anonymous) = (0, 0);
    let mut finish = |current: Option<(usize, usize, bool)>, resident, anonymous| {
        if let Some((start, end, true)) = current
            && anonymous == 0
        {
            found.push(Mapping {
                start,
                end,
                resident,
            });
        }
    };
    for line in smaps.lines() {
        if let Some(header) = mapping_header(line) {
            finish(current, resident, anonymous);
            (resident, anonymous) = (0, 0);
            let (start, end, perms, device, inode, path) = header;
            current = Some((start, end, perms == "r-xp" && exe.is(device, inode, path)));
        } else if let Some(kb) = field_kb(line, "Rss:") {
            resident = kb * 1024;
        } else if let Some(kb) = field_kb(line, "Anonymous:") {
            anonymous = kb;
        }
    }
    finish(current, resident, anonymous);
    found
}

/// A header line of smaps (`start-end perms offset major:minor inode path`): the range, the
/// permissions, the device (as `stat` encodes it), the inode and the path (empty for an
/// anonymous mapping).
fn mapping_header(line: &str) -> Option<(usize, usize, &str, u64, u64, &str)> {
    let mut words = line.split_ascii_whitespace();
    let (start, end) = words.next()?.split_once('-')?;
    let start = usize::from_str_radix(start, 16).ok()?;
    let end = usize::from_str_radix(end, 16).ok()?;
    let perms = words.next()?;
    words.next()?; // offset
    let (major, minor) = words.next()?.split_once(':')?;
    let major = u64::from_str_radix(major, 16).ok()?;
    let minor = u64::from_str_radix(minor, 16).ok()?;
    let inode = words.next()?.parse().ok()?;
    let path = line.splitn(6, ' ').nth(5).unwrap_or_default().trim();
    Some((start, end, perms, device_number(major, minor), inode, path))
}

/// The device number `stat` reports for `major:minor` (glibc's `makedev`).
fn device_number(major: u64, minor: u64) -> u64 {
    ((major & 0xfffff000) << 32)
        | ((major & 0xfff) << 8)
        | ((minor & 0xffffff00) << 12)
        | (minor & 0xff)
}

/// The value in kB of the smaps field `name` on `line`.
fn field_kb(line: &str, name: &str) -> Option<usize> {
    line.strip_prefix(name)?
        .trim()
        .strip_suffix("kB")?
        .trim()
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMAPS: &str = "\
55b99b3eb000-55b99beed000 r--p 00000000 fe:00 10603903                   /srv/capstan
Rss:                1940 kB
Anonymous:             0 kB
55b99beed000-55b99ee2f000 r-xp 00b01000 fe:00 10603903                   /srv/capstan
Size:              48392 kB
Rss:               31640 kB
Anonymous:             0 kB
55b99ee2f000-55b99f052000 r--p 03a42000 fe:00 10603903                   /srv/capstan
Rss:                2160 kB
Anonymous:          2160 kB
7f86625ac000-7f8662702000 r-xp 00026000 fe:00 326279                     /usr/lib/libc.so.6
Rss:                1232 kB
Anonymous:             0 kB
7f8662800000-7f8662900000 r-xp 00000000 fe:00 10603903                   /srv/capstan
Rss:                   8 kB
Anonymous:             4 kB
";

    fn exe(dev: u64, ino: u64, path: &str) -> Executable {
        Executable {
            dev,
            ino,
            path: path.into(),
        }
    }

    #[test]
    fn only_the_executables_unwritten_code_is_released() {
        let dev = device_number(0xfe, 0);
        assert_eq!(
            executable_code(SMAPS, &exe(dev, 10603903, "/elsewhere")),
            [Mapping {
                start: 0x55b99beed000,
                end: 0x55b99ee2f000,
                resident: 31640 * 1024
            }]
        );
        // Another file's code, or the same inode on another device, is never released.
        assert_eq!(executable_code(SMAPS, &exe(dev, 326279, "/x")).len(), 1);
        let elsewhere = exe(device_number(0xfe, 1), 10603903, "/x");
        assert!(executable_code(SMAPS, &elsewhere).is_empty());
        // The path names it where device and inode differ (an overlay's layer).
        let by_path = exe(device_number(0, 0x2f), 77, "/srv/capstan");
        assert_eq!(executable_code(SMAPS, &by_path).len(), 1);
    }

    #[test]
    fn this_binary_is_found_by_identity_and_by_path() {
        // /proc/self/exe's device as stat reports it appears as major:minor in smaps.
        let current = Executable::current().unwrap();
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let by_identity = exe(current.dev, current.ino, "/elsewhere");
        assert!(!executable_code(&smaps, &by_identity).is_empty());
        let by_path = exe(0, 0, &current.path);
        assert!(!executable_code(&smaps, &by_path).is_empty());
    }

    #[test]
    fn released_code_still_runs() {
        // Dropping the test binary's own code pages: what runs next faults them back in.
        let released = release_startup_code().unwrap();
        assert!(released > 0);
        let sum: u64 = (1..=1000u64).map(|n| n * n).sum();
        assert_eq!(sum, 333_833_500);
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let after: usize = executable_code(&smaps, &Executable::current().unwrap())
            .iter()
            .map(|m| m.resident)
            .sum();
        assert!(after < released, "{after} bytes resident of {released}");
    }
}
