//! Variables that make one program run another (or load code, or change which program a
//! name finds): setting one, as a prefix, through `env`, or exported earlier in the line,
//! leaves the analysis unable to say what runs.

/// Why setting `name` makes the line unresolved, or None for an ordinary variable.
pub fn runs_programs(name: &str) -> Option<&'static str> {
    const EXACT: &[(&str, &str)] = &[
        ("BASH_ENV", "makes bash run a file first"),
        ("ENV", "makes sh run a file first"),
        ("PAGER", "names the program a pager runs"),
        ("MANPAGER", "names the program man runs"),
        ("GIT_PAGER", "names the program git runs"),
        ("LESSOPEN", "makes less run a command"),
        ("LESSCLOSE", "makes less run a command"),
        ("LESS", "gives less commands to run"),
        ("LESSKEY", "gives less a key file that can set LESSOPEN"),
        ("LESSKEYIN", "gives less a key file that can set LESSOPEN"),
        ("LESSKEY_SRC", "gives less a key file that can set LESSOPEN"),
        ("EDITOR", "names a program others run"),
        ("VISUAL", "names a program others run"),
        ("SHELL", "names the shell others run"),
        ("BROWSER", "names a program others run"),
        ("PATH", "changes which program a name runs"),
        ("PROMPT_COMMAND", "runs a command"),
        ("SHELLOPTS", "changes how bash runs"),
        ("BASHOPTS", "changes how bash runs"),
        ("IFS", "changes how words split"),
        ("PYTHONSTARTUP", "makes python run a file"),
        ("PYTHONPATH", "makes python load code from elsewhere"),
        ("PYTHONHOME", "makes python load code from elsewhere"),
        ("PERL5OPT", "gives perl options that run code"),
        ("PERL5LIB", "makes perl load code from elsewhere"),
        ("PERL5DB", "makes perl run code"),
        ("NODE_OPTIONS", "gives node options that run code"),
        ("RUBYOPT", "gives ruby options that run code"),
        ("RUBYLIB", "makes ruby load code from elsewhere"),
        ("JAVA_TOOL_OPTIONS", "gives java options that load code"),
        ("_JAVA_OPTIONS", "gives java options that load code"),
        ("GCONV_PATH", "makes the C library load code"),
        ("GLIBC_TUNABLES", "changes how the C library loads"),
        ("HOME", "changes which configuration files programs read"),
        (
            "XDG_CONFIG_HOME",
            "changes which configuration files programs read",
        ),
        ("SSH_ASKPASS", "names a program ssh runs"),
        ("SUDO_ASKPASS", "names a program sudo runs"),
        ("TAR_OPTIONS", "gives tar options that run programs"),
        ("RIPGREP_CONFIG_PATH", "gives rg options that run programs"),
        ("MANOPT", "gives man options that run programs"),
    ];
    if let Some((_, why)) = EXACT.iter().find(|(n, _)| *n == name) {
        return Some(why);
    }
    if name.starts_with("LD_") {
        return Some("makes programs load code from elsewhere");
    }
    if name.starts_with("BASH_FUNC_") {
        return Some("defines a function bash runs");
    }
    if name.starts_with("GIT_") && !GIT_HARMLESS.contains(&name) {
        return Some("can name programs or configuration git runs");
    }
    None
}

/// GIT_* variables that only carry data.
const GIT_HARMLESS: &[&str] = &[
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE",
    "GIT_TERMINAL_PROMPT",
    "GIT_OPTIONAL_LOCKS",
    "GIT_FLUSH",
    "GIT_MERGE_VERBOSITY",
];
