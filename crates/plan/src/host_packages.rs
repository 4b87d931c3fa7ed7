//! The host-environment ingredient of a tool's run key (docs/cache.md): the installed versions of
//! the Debian packages its manifest entry names (`host_packages`). Installing, upgrading or
//! removing one of them gives the tool's runs new keys, so they are executed again; the rest of the
//! host stays out of the key.

use std::process::Command;

/// `name=version` per package, one a line, in the order given; `name=` for a package that is
/// not installed (so installing it changes the key). An error when `dpkg-query` cannot run.
pub fn package_versions(names: &[String]) -> Result<String, String> {
    if names.is_empty() {
        return Ok(String::new());
    }
    let out = Command::new("dpkg-query")
        .arg("-W")
        .arg("-f=${binary:Package} ${Package} ${db:Status-Abbrev} ${Version}\n")
        .arg("--")
        .args(names)
        .output()
        .map_err(|e| format!("cannot run `dpkg-query` (host_packages needs Debian's dpkg): {e}"))?;
    // Exit 1 with "no packages found matching" for names not known: they are not installed.
    let listed = String::from_utf8_lossy(&out.stdout);
    let installed: Vec<(&str, &str, &str)> = listed
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (qualified, plain, status) = (f.next()?, f.next()?, f.next()?);
            // `ii`, `hi`...: the package is installed; `rc` (config files only) is not.
            let version = if status.as_bytes().get(1) == Some(&b'i') {
                f.next().unwrap_or("")
            } else {
                ""
            };
            Some((qualified, plain, version))
        })
        .collect();
    Ok(names
        .iter()
        .map(|name| {
            let version = installed
                .iter()
                .find(|(q, p, _)| q == name || p == name)
                .map_or("", |(_, _, v)| v);
            format!("{name}={version}\n")
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn installed_packages_have_their_version_and_missing_ones_none() {
        // dpkg itself is installed wherever dpkg-query runs.
        let Ok(text) = package_versions(&["dpkg".into(), "no-such-package-of-mccbuild".into()])
        else {
            return mccbuild_testkit::skip("dpkg-query is not available (not a Debian host)");
        };
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(
            lines[0].starts_with("dpkg=1.") && lines[0].len() > 7,
            "{text}"
        );
        assert_eq!(lines[1], "no-such-package-of-mccbuild=");
        assert_eq!(package_versions(&[]).unwrap(), "");
    }
}
