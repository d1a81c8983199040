//! The pinned npm packages the interop and conformance tests run (tests/interop and
//! tests/interop/conformance), installed by `.ci/interop-setup.sh` when missing.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// Runs the pinned installer once per test process: the tests run on parallel threads of one
/// process, and `npm ci` replaces node_modules, so a second concurrent run would race it.
/// The installer sets up both folders, so the interop and the conformance tests share it.
pub fn install_once() -> &'static Result<(), String> {
    static INSTALL: OnceLock<Result<(), String>> = OnceLock::new();
    INSTALL.get_or_init(|| {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".ci/interop-setup.sh");
        eprintln!("npm packages missing: running {}", script.display());
        let out = Command::new("bash")
            .arg(&script)
            .output()
            .map_err(|e| format!("could not run {}: {e}", script.display()))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{} failed ({}):\n{}{}",
                script.display(),
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    })
}
