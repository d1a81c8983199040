//! Reading a program's options the way its parser does: GNU long options may be shortened
//! to any unique prefix (`--outp=f` is `--output=f`) and short options cluster and take
//! their argument attached (`-of notes.txt` is `-o f`).

/// One option as the program reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opt {
    /// The long name without dashes, or the short letter as a string.
    pub name: String,
    /// Its argument, attached or the next word.
    pub value: Option<String>,
}

/// What a program's option parser knows.
pub struct Spec<'a> {
    /// Long options (without `--`) and whether they take an argument.
    pub long: &'a [(&'a str, bool)],
    /// Short letters that take an argument.
    pub short_with_arg: &'a str,
}

/// The long names `given` (a word's name after `--`, without `=value`) may stand for: the
/// exact name, or every name it is a prefix of. More than one means ambiguous; callers
/// that look for a dangerous option treat every candidate as meant.
pub fn long_candidates<'a>(spec: &Spec<'a>, given: &str) -> Vec<&'a str> {
    if given.is_empty() {
        return Vec::new();
    }
    if let Some((name, _)) = spec.long.iter().find(|(n, _)| *n == given) {
        return vec![name];
    }
    spec.long
        .iter()
        .filter(|(n, _)| n.starts_with(given))
        .map(|(n, _)| *n)
        .collect()
}

/// Reads the options of `args` up to the first operand (or `--`); `stop_at_operand` false
/// reads options after operands too (GNU permutes). Returns the options and the index of
/// the first operand.
pub fn read(spec: &Spec<'_>, args: &[String], stop_at_operand: bool) -> (Vec<Opt>, usize) {
    let mut opts = Vec::new();
    let mut first_operand = None;
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        if arg == "--" {
            first_operand.get_or_insert(i + 1);
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (given, attached) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let candidates = long_candidates(spec, given);
            let takes_arg = candidates
                .iter()
                .any(|c| spec.long.iter().any(|(n, a)| n == c && *a));
            let value = if attached.is_some() {
                attached
            } else if takes_arg {
                i += 1;
                args.get(i).cloned()
            } else {
                None
            };
            if candidates.is_empty() {
                opts.push(Opt {
                    name: given.to_string(),
                    value: value.clone(),
                });
            }
            for c in candidates {
                opts.push(Opt {
                    name: c.to_string(),
                    value: value.clone(),
                });
            }
        } else if arg.len() > 1 && arg.starts_with('-') {
            let letters: Vec<char> = arg[1..].chars().collect();
            for (k, c) in letters.iter().enumerate() {
                if spec.short_with_arg.contains(*c) {
                    let rest: String = letters[k + 1..].iter().collect();
                    let value = if rest.is_empty() {
                        i += 1;
                        args.get(i).cloned()
                    } else {
                        Some(rest)
                    };
                    opts.push(Opt {
                        name: c.to_string(),
                        value,
                    });
                    break;
                }
                opts.push(Opt {
                    name: c.to_string(),
                    value: None,
                });
            }
        } else {
            first_operand.get_or_insert(i);
            if stop_at_operand {
                break;
            }
        }
        i += 1;
    }
    (opts, first_operand.unwrap_or(args.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SORT: Spec = Spec {
        long: &[
            ("output", true),
            ("check", false),
            ("compress-program", true),
            ("reverse", false),
        ],
        short_with_arg: "koStT",
    };

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn attached_short_and_abbreviated_long_options() {
        let (opts, _) = read(&SORT, &strings(&["-rof", "notes.txt"]), false);
        assert!(opts.contains(&Opt {
            name: "o".into(),
            value: Some("f".into())
        }));
        let (opts, _) = read(&SORT, &strings(&["--outp=f", "notes.txt"]), false);
        assert_eq!(opts[0].name, "output");
        let (opts, _) = read(&SORT, &strings(&["--c", "x"]), false);
        assert!(opts.iter().any(|o| o.name == "compress-program"));
        let (opts, first) = read(&SORT, &strings(&["-k1o", "x"]), false);
        assert_eq!(opts[0].name, "k");
        assert_eq!(first, 1);
    }
}
