//! Resource limits of the agent's own process.

/// Raises the soft limit on open files (`RLIMIT_NOFILE`) to the hard limit, so a server
/// holding many connections is limited by what the administrator allows rather than by the
/// conventional soft default (often 1024). Returns the soft limit before and after; a soft
/// limit already at the hard one is left alone.
#[cfg(unix)]
pub fn raise_open_file_limit() -> std::io::Result<(u64, u64)> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `lim` is a valid, writable rlimit for the call to fill in.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let before = lim.rlim_cur;
    if lim.rlim_cur >= lim.rlim_max {
        return Ok((before, before));
    }
    lim.rlim_cur = lim.rlim_max;
    // SAFETY: `lim` is a valid rlimit; raising the soft limit up to the hard one is allowed.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok((before, lim.rlim_cur))
}

/// Not needed (nor available) elsewhere: nothing changes.
#[cfg(not(unix))]
pub fn raise_open_file_limit() -> std::io::Result<(u64, u64)> {
    Ok((0, 0))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_soft_limit_ends_at_the_hard_one() {
        let (_, after) = super::raise_open_file_limit().unwrap();
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: a valid rlimit to fill in.
        assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) }, 0);
        assert_eq!(lim.rlim_cur, lim.rlim_max);
        assert_eq!(after, lim.rlim_cur);
    }
}
