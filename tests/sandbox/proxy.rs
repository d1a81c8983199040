//! Decision 0099 with real confined processes and the real kernel: a process whose profile
//! says `network = "proxy"` reaches the listener handed back from its namespace, and
//! nothing else: no host listener (whatever its port), no datagram.

use std::io::{ErrorKind, Read};
use std::net::{TcpListener, UdpSocket};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use toolgate::sandbox::{
    Capabilities, NETWORK_PROXY_FORCE_UNAVAILABLE_ENV, PROXY_PORT, Profile, ProxySupport, Sandbox,
    SandboxStatus,
};
use toolgate::settings::{NetworkAccess, SandboxSettings};

use super::{environment, fake_home, outside};

fn proxied_sandbox() -> Sandbox {
    Sandbox::new(SandboxSettings::default())
}

/// Runs `script` in bash under `sandbox`'s bash profile for `ws`, and returns what it
/// printed and the listener living in its namespace.
fn run_proxied(sandbox: &Sandbox, ws: &Path, script: &str) -> (Output, TcpListener) {
    let profile = sandbox.bash_profile(ws);
    assert_eq!(
        profile.network,
        NetworkAccess::Proxy,
        "{}",
        profile.describe()
    );
    let confinement = sandbox.confine(&profile).unwrap().expect("confined");
    assert!(confinement.is_proxied());
    let mut command = Command::new("bash");
    command
        .arg("-c")
        .arg(script)
        .current_dir(ws)
        .env_clear()
        .envs(sandbox.environment_for(&profile))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    confinement.install(&mut command);
    let child = command.spawn().unwrap();
    let listener = confinement.take_proxy_listener().unwrap();
    listener.set_nonblocking(true).unwrap();
    (child.wait_with_output().unwrap(), listener)
}

/// What one connection to `listener` sent, waiting up to a few seconds for it.
fn received(listener: &TcpListener) -> Option<String> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match listener.accept() {
            Ok((mut stream, _)) => {
                stream.set_nonblocking(false).unwrap();
                stream
                    .set_read_timeout(Some(Duration::from_secs(5)))
                    .unwrap();
                let mut text = String::new();
                let _ = stream.read_to_string(&mut text);
                return Some(text);
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(_) => return None,
        }
    }
}

/// Whether anything connected to `listener` (the child has ended: no waiting needed).
fn nothing_arrived(listener: &TcpListener) -> bool {
    listener.set_nonblocking(true).unwrap();
    matches!(listener.accept(), Err(e) if e.kind() == ErrorKind::WouldBlock)
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn a_proxied_process_reaches_the_handed_back_listener_and_is_told_where_it_is() {
    environment();
    let ws = tempfile::tempdir().unwrap();
    let (output, listener) = run_proxied(
        &proxied_sandbox(),
        ws.path(),
        &format!("echo \"via $HTTPS_PROXY $ALL_PROXY\" > /dev/tcp/127.0.0.1/{PROXY_PORT}"),
    );
    assert!(output.status.success(), "{}", text(&output));
    assert_eq!(
        received(&listener).as_deref(),
        Some(
            format!("via http://127.0.0.1:{PROXY_PORT} socks5h://127.0.0.1:{PROXY_PORT}\n")
                .as_str()
        )
    );
}

#[test]
fn direct_connections_to_host_listeners_receive_nothing_whatever_the_port() {
    environment();
    let ws = tempfile::tempdir().unwrap();
    let other = TcpListener::bind("127.0.0.1:0").unwrap();
    let other_port = other.local_addr().unwrap().port();
    // A host listener on the proxy's own port number (when the port is free here), and
    // one on another loopback address with that number.
    let same_port = TcpListener::bind(("127.0.0.1", PROXY_PORT)).ok();
    let second_address = TcpListener::bind(("127.0.0.2", PROXY_PORT)).ok();
    let script = format!(
        "echo direct > /dev/tcp/127.0.0.1/{other_port} && echo REACHED-OTHER; \
         echo second > /dev/tcp/127.0.0.2/{PROXY_PORT} && echo REACHED-SECOND; \
         echo v6 > /dev/tcp/::1/{PROXY_PORT} && echo REACHED-V6; \
         echo proxied > /dev/tcp/127.0.0.1/{PROXY_PORT} && echo REACHED-PROXY"
    );
    let (output, inside) = run_proxied(&proxied_sandbox(), ws.path(), &script);
    let shown = text(&output);
    assert!(!shown.contains("REACHED-OTHER"), "{shown}");
    assert!(!shown.contains("REACHED-SECOND"), "{shown}");
    assert!(!shown.contains("REACHED-V6"), "{shown}");
    assert!(shown.contains("REACHED-PROXY"), "{shown}");
    assert!(nothing_arrived(&other), "the host listener was reached");
    if let Some(host) = &same_port {
        assert!(
            nothing_arrived(host),
            "the host's listener on the proxy's port was reached"
        );
    }
    if let Some(host) = &second_address {
        assert!(nothing_arrived(host), "127.0.0.2 on the host was reached");
    }
    // The one connection that succeeded is the one toolgate holds.
    assert_eq!(received(&inside).as_deref(), Some("proxied\n"));
}

#[test]
fn no_datagram_leaves_and_datagram_sockets_are_refused() {
    environment();
    let ws = tempfile::tempdir().unwrap();
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = udp.local_addr().unwrap().port();
    let script = format!(
        "echo dgram > /dev/udp/127.0.0.1/{port} && echo SENT-BASH; \
         python3 -c \"
import socket
for family, kind, proto in [(socket.AF_INET, socket.SOCK_DGRAM, 0), (socket.AF_INET6, socket.SOCK_DGRAM, 0), (socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP), (socket.AF_INET, socket.SOCK_STREAM, 132), (socket.AF_INET, socket.SOCK_STREAM | socket.SOCK_NONBLOCK, 262), (socket.AF_NETLINK, socket.SOCK_RAW, 0), (socket.AF_PACKET, socket.SOCK_RAW, 0)]:
    try:
        socket.socket(family, kind, proto)
        print('OPENED', family, kind, proto)
    except OSError as e:
        print('socket refused', e.errno)
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
print('stream ok')
for port in [0, 8080]:
    try:
        s.bind(('127.0.0.1', port))
        print('BOUND', port)
    except OSError as e:
        print('bind refused', e.errno)
\""
    );
    let (output, _listener) = run_proxied(&proxied_sandbox(), ws.path(), &script);
    let shown = text(&output);
    assert!(!shown.contains("SENT-BASH"), "{shown}");
    assert!(!shown.contains("OPENED"), "{shown}");
    assert_eq!(shown.matches("socket refused 13").count(), 7, "{shown}");
    assert!(shown.contains("stream ok"), "{shown}");
    // No listener of its own either (Landlock handles bind with no rule).
    assert!(!shown.contains("BOUND"), "{shown}");
    assert_eq!(shown.matches("bind refused 13").count(), 2, "{shown}");
    udp.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 64];
    assert_eq!(
        udp.recv_from(&mut buf).map(|_| ()).unwrap_err().kind(),
        ErrorKind::WouldBlock,
        "a datagram arrived"
    );
}

#[test]
fn a_proxied_process_still_writes_only_where_its_profile_says() {
    environment();
    let ws = tempfile::tempdir().unwrap();
    let out_dir = outside("proxy-writes");
    let home = fake_home("proxy-home");
    let sandbox = Sandbox::new(SandboxSettings {
        home: Some(home.clone()),
        ..SandboxSettings::default()
    });
    let script = format!(
        "echo inside > made.txt && cat made.txt; echo x > {}/escaped.txt; cat {}/.ssh/id_ed25519; id -u",
        out_dir.display(),
        home.display()
    );
    let (output, _listener) = run_proxied(&sandbox, ws.path(), &script);
    let shown = text(&output);
    // The process keeps its own user id inside its namespace.
    // SAFETY: getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        format!("inside\n{uid}\n"),
        "{shown}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("made.txt")).unwrap(),
        "inside\n"
    );
    assert!(!out_dir.join("escaped.txt").exists(), "{shown}");
    assert_eq!(shown.matches("Permission denied").count(), 2, "{shown}");
    assert!(!shown.contains("PRIVATE-KEY-MATERIAL"), "{shown}");
}

fn status(proxy: ProxySupport) -> SandboxStatus {
    let SandboxStatus::Available(caps) = SandboxStatus::probe() else {
        panic!("the sandbox is needed for this test");
    };
    SandboxStatus::Available(Capabilities {
        network_proxy: proxy,
        ..caps
    })
}

#[test]
fn without_the_proxy_bash_runs_offline_and_says_so_and_proxied_profiles_are_refused() {
    environment();
    let ws = tempfile::tempdir().unwrap();
    let reason = "writing /proc/self/uid_map failed: Operation not permitted (os error 1)";
    let sandbox = Sandbox::with_status(
        SandboxSettings::default(),
        status(ProxySupport::Unavailable(reason.into())),
    );
    let profile = sandbox.bash_profile(ws.path());
    assert_eq!(profile.network, NetworkAccess::None);
    assert!(profile.describe().ends_with("no network"));
    let notice = sandbox.startup_notice(ws.path()).unwrap_or_default();
    assert!(
        notice.contains(&format!("the network proxy is unavailable ({reason})")),
        "{notice}"
    );
    assert!(notice.contains("run without network"), "{notice}");
    // The degraded profile runs, offline; a proxied one cannot be had here at all.
    let confinement = sandbox.confine(&profile).unwrap().unwrap();
    assert!(!confinement.is_proxied());
    assert!(confinement.take_proxy_listener().is_err());
    let mut proxied = Profile::default_shape();
    proxied.network = NetworkAccess::Proxy;
    let err = sandbox.confine(&proxied).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("the sandbox is unavailable: the network proxy is unavailable: {reason}")
    );
    // Offline means offline: the environment names no proxy.
    let vars = sandbox.environment_for(&profile);
    assert!(!vars.iter().any(|(n, _)| n == "HTTPS_PROXY"));
    // Where the proxy works there is nothing to say.
    let fine = Sandbox::with_status(SandboxSettings::default(), status(ProxySupport::Available));
    assert_eq!(fine.startup_notice(ws.path()), None);
}

/// The real binary: `toolgate status` says whether bash's network goes through the proxy,
/// and the switch shows the degraded path (bash offline, and why).
#[test]
fn status_says_whether_the_network_proxy_is_available() {
    environment();
    let ws = tempfile::tempdir().unwrap();
    let run = |force: bool| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_toolgate"));
        command
            .arg("status")
            .current_dir(ws.path())
            .env("TOOLGATE_CONFIG_DIR", super::base().join("no-config"));
        if force {
            command.env(NETWORK_PROXY_FORCE_UNAVAILABLE_ENV, "1");
        }
        let out = command.output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let normal = run(false);
    assert!(
        normal.contains(&format!(
            "\n  network proxy: available (own network namespace, TCP only to 127.0.0.1:{PROXY_PORT})\n"
        )),
        "{normal}"
    );
    assert!(
        normal.contains("network only through toolgate's proxy\n"),
        "{normal}"
    );
    let forced = run(true);
    assert!(
        forced.contains(
            "\n  network proxy: unavailable: forced by TOOLGATE_NETWORK_PROXY_FORCE_UNAVAILABLE=1 (proxied commands run offline)\n"
        ),
        "{forced}"
    );
    assert!(forced.contains("\n  bash: workspace-write"), "{forced}");
    assert!(!forced.contains("through toolgate's proxy"), "{forced}");
}
