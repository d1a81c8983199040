//! bash: the guard's table, the depth cap and rules for commands.

use super::*;

/// The shell table from the issue, plus the deny list and wrappers.
#[test]
fn bash_guard_table() {
    let p = Policy::default();
    let table: &[(&str, &str, &str)] = &[
        // must flag
        (
            "echo ready && rm notes.txt",
            "ask",
            "bash guard: destructive (rm)",
        ),
        ("(del x)", "ask", "bash guard: destructive (del)"),
        ("/usr/bin/rm x", "ask", "bash guard: destructive (rm)"),
        ("rm; echo", "ask", "bash guard: destructive (rm)"),
        ("bash -c \"rm -rf /\"", "deny", "bash deny list: rm -rf /"),
        ("$(rm x)", "ask", "bash guard: destructive (rm)"),
        ("echo `rmdir d`", "ask", "bash guard: destructive (rmdir)"),
        ("erase f", "ask", "bash guard: destructive (erase)"),
        ("chmod 777 f", "ask", "bash guard: destructive (chmod 777)"),
        (
            "echo x > /etc/hosts",
            "ask",
            "bash guard: destructive (redirection into /etc/)",
        ),
        (
            "env FOO=1 command exec nohup time rm x",
            "ask",
            "bash guard: destructive (rm)",
        ),
        ("A=1 B=2 rm x", "ask", "bash guard: destructive (rm)"),
        ("\\rm x", "ask", "bash guard: destructive (rm)"),
        ("echo 'unbalanced", "ask", "bash guard: unparsable"),
        ("echo \"unbalanced", "ask", "bash guard: unparsable"),
        // deny list
        ("rm -rf /", "deny", "bash deny list: rm -rf /"),
        ("rm -fr /", "deny", "bash deny list: rm -fr /"),
        ("sudo ls", "deny", "bash deny list: sudo"),
        (
            "ls && /sbin/shutdown -h now",
            "deny",
            "bash deny list: shutdown",
        ),
        ("reboot", "deny", "bash deny list: reboot"),
        ("mkfs /dev/sda1", "deny", "bash deny list: mkfs"),
        ("mkfs.ext4 /dev/sda1", "deny", "bash deny list: mkfs"),
        (
            "dd if=/dev/zero of=/dev/sda",
            "deny",
            "bash deny list: dd if=",
        ),
        ("sh -c 'sh -c \"sudo id\"'", "deny", "bash deny list: sudo"),
        // must not flag
        ("echo rm is just a word", "allow", "bash guard"),
        ("grep del x.py", "allow", "bash guard"),
        ("git commit -m \"rm x\"", "allow", "bash guard"),
        ("delimiter x", "allow", "bash guard"),
        ("ls -la | grep rm", "allow", "bash guard"),
        ("echo '$(rm x)'", "allow", "bash guard"),
        ("cat /etc/hosts > out.txt", "allow", "bash guard"),
        ("", "allow", "bash guard"),
    ];
    for (command, expected, rule) in table {
        let v = bash(&p, command);
        // `rm -fr /` is the same pattern as `rm -rf /`.
        let rule = rule.replace("rm -fr /", "rm -rf /");
        assert_eq!(
            (kind(&v), v.rule.as_str()),
            (*expected, rule.as_str()),
            "{command}: {v:?}"
        );
        if *expected == "deny" {
            let Decision::Deny { why } = &v.decision else {
                unreachable!()
            };
            assert!(why.contains(&rule["bash deny list: ".len()..]), "{why}");
        }
    }
}

#[test]
fn bash_depth_cap_asks() {
    let mut line = "echo hi".to_string();
    for _ in 0..12 {
        line = format!("sh -c '{}'", line.replace('\'', "'\\''"));
    }
    let v = bash(&Policy::default(), &line);
    assert_eq!(
        (kind(&v), v.rule.as_str()),
        ("ask", "bash guard: unparsable")
    );
}

#[test]
fn bash_user_rules() {
    // An allow rule turns the destructive ask into allow — for that command only.
    let p = with_rules(&[(RuleList::Allow, "Bash(rm:*)", project())]);
    let v = bash(&p, "rm notes.txt");
    assert_eq!(
        (kind(&v), v.rule.as_str(), v.source.clone()),
        ("allow", "Bash(rm:*)", project())
    );
    assert_eq!(kind(&bash(&p, "echo ok && rmdir d")), "ask");
    // … but never overrides the deny list.
    assert_eq!(kind(&bash(&p, "rm -rf /")), "deny");
    // … nor makes an unparsable line run.
    assert_eq!(kind(&bash(&p, "rm 'x")), "ask");

    // Prefix and glob rules, applied to every command of the line.
    let p = with_rules(&[
        (RuleList::Deny, "Bash(git push:*)", user()),
        (RuleList::Ask, "Bash(npm run *)", user()),
    ]);
    let v = bash(&p, "git status && git push origin main");
    assert_eq!((kind(&v), v.rule.as_str()), ("deny", "Bash(git push:*)"));
    assert_eq!(kind(&bash(&p, "npm run build")), "ask");
    assert_eq!(kind(&bash(&p, "npm test")), "allow");
    // Deny rules also see the command as written and through wrappers.
    assert_eq!(kind(&bash(&p, "env git push")), "deny");
    assert_eq!(kind(&bash(&p, "sh -c 'git push'")), "deny");

    // Allow rules see the command as run: `Bash(env:*)` does not allow `env rm x`.
    let p = with_rules(&[(RuleList::Allow, "Bash(env:*)", user())]);
    assert_eq!(kind(&bash(&p, "env rm x")), "ask");
    // Bare `Bash` in deny or ask covers every command.
    let p = with_rules(&[(RuleList::Ask, "Bash", user())]);
    assert_eq!(kind(&bash(&p, "ls")), "ask");
}
