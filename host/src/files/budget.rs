//! Memory in bytes: one budget for the run (`--memory`), which every file's work is admitted
//! against before the file is read, and released when its output is written or it fails.
//! A file's cost comes from its header ([`cost`]); one that alone exceeds the budget fails
//! with its reason instead of waiting for ever.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use crate::limits::Header;

/// The bytes in flight, against a cap.
pub struct Budget {
    cap: u64,
    state: Mutex<(u64, HashMap<usize, u64>)>,
    freed: Condvar,
}

impl Budget {
    pub fn new(cap: u64) -> Budget {
        Budget { cap, state: Mutex::new((0, HashMap::new())), freed: Condvar::new() }
    }

    pub fn cap(&self) -> u64 {
        self.cap
    }

    /// Waits until `bytes` more fit (or nothing else is in flight), then holds them for
    /// `job`; with `wait` false, `Ok(false)` at once, holding nothing, when they do not fit
    /// now. `Err` when they can never fit, or `stop` is set while waiting.
    pub fn admit(&self, job: usize, bytes: u64, stop: &AtomicBool, wait: bool) -> Result<bool, String> {
        if bytes > self.cap {
            return Err(format!(
                "needs about {} of memory, over the run's budget of {} (--memory)",
                size(bytes),
                size(self.cap)
            ));
        }
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        while st.0 + bytes > self.cap {
            if !wait {
                return Ok(false);
            }
            if stop.load(Relaxed) {
                return Err("interrupted before it was read".into());
            }
            // Timed, so a stop request is seen while waiting.
            st = self.freed.wait_timeout(st, Duration::from_millis(100)).unwrap_or_else(|e| e.into_inner()).0;
        }
        st.0 += bytes;
        *st.1.entry(job).or_default() += bytes;
        Ok(true)
    }

    /// Lets go of what `job` holds (nothing if it holds nothing).
    pub fn release(&self, job: usize) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(bytes) = st.1.remove(&job) {
            st.0 -= bytes;
            self.freed.notify_all();
        }
    }
}

/// What one file's work holds at most, from its header: the file, and three images of the
/// larger of its decoded and processed pixel sizes (the decoded image, the result, and the
/// encoded output or a staging copy; measured in docs/RELIABILITY.md).
pub fn cost(header: &Header, file_len: u64, bytes_per_pixel: u32) -> u64 {
    let pixels = u64::from(header.width) * u64::from(header.height);
    file_len + 3 * pixels * u64::from(header.decoded_bytes_per_pixel().max(bytes_per_pixel))
}

/// The default budget: half the memory the system reports available (Linux's
/// `MemAvailable`), at least 256 MiB; 4 GiB where that cannot be read.
pub fn default_budget() -> u64 {
    let available = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        let line = m.lines().find(|l| l.starts_with("MemAvailable:"))?;
        Some(line.split_whitespace().nth(1)?.parse::<u64>().ok()? * 1024)
    });
    available.map_or(4 << 30, |a| (a / 2).max(256 << 20))
}

/// A size such as `8G`, `512M`, `1.5GiB` or `1000000` (bytes).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let scale: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => return Err(format!("--memory {s}: use a number of bytes with K, M, G or T, for example 8G")),
    };
    match number.trim().parse::<f64>() {
        Ok(n) if n.is_finite() && n > 0.0 => Ok((n * scale as f64) as u64),
        _ => Err(format!("--memory {s}: use a number of bytes above 0 with K, M, G or T, for example 8G")),
    }
}

/// The process's peak resident memory (Linux's `VmHWM`), in bytes.
pub fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    Some(line.split_whitespace().nth(1)?.parse::<u64>().ok()? * 1024)
}

/// Bytes for people: `1.5 GiB`.
pub fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 => format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64),
        b if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64),
        b => format!("{b} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("8G"), Ok(8 << 30));
        assert_eq!(parse_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size("1000"), Ok(1000));
        assert!(parse_size("-1G").is_err() && parse_size("8Q").is_err() && parse_size("G").is_err());
    }

    #[test]
    fn admission_waits_for_releases_and_refuses_what_cannot_fit() {
        let b = std::sync::Arc::new(Budget::new(100));
        let stop = AtomicBool::new(false);
        assert!(b.admit(0, 101, &stop, true).is_err());
        assert!(b.admit(0, 60, &stop, true).unwrap());
        assert!(!b.admit(1, 60, &stop, false).unwrap(), "no wait when asked not to");
        let b2 = b.clone();
        let t = std::thread::spawn(move || b2.admit(1, 60, &AtomicBool::new(false), true));
        std::thread::sleep(Duration::from_millis(50));
        assert!(!t.is_finished(), "60 + 60 is over 100: it waits");
        b.release(0);
        t.join().unwrap().unwrap();
        stop.store(true, Relaxed);
        assert!(b.admit(2, 60, &stop, true).is_err(), "a stop ends the wait");
    }
}
