//! A tiny HTTP origin server on a loopback address (127.0.0.1, 127.0.0.2, …) that logs the
//! request line of every connection it receives and answers each with a short body naming
//! itself. It stops by itself when dropped (or after two minutes).

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub struct Origin {
    pub addr: SocketAddr,
    seen: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
}

impl Origin {
    /// Listens on `ip` (a free port).
    pub fn start(ip: &str) -> Origin {
        let listener = TcpListener::bind((ip, 0)).expect("bind the origin server");
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (log, stopped) = (seen.clone(), stop.clone());
        std::thread::spawn(move || {
            let until = Instant::now() + Duration::from_secs(120);
            while !stopped.load(Ordering::SeqCst) && Instant::now() < until {
                match listener.accept() {
                    Ok((stream, _)) => {
                        stream.set_nonblocking(false).unwrap();
                        let log = log.clone();
                        std::thread::spawn(move || answer(stream, addr, &log));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        });
        Origin { addr, seen, stop }
    }

    /// `http://IP:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The request lines received so far ("(connected, nothing sent)" for a connection that
    /// sent no request line).
    pub fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

impl Drop for Origin {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

fn answer(stream: std::net::TcpStream, addr: SocketAddr, log: &Mutex<Vec<String>>) {
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut first = String::new();
    let _ = reader.read_line(&mut first);
    let first = first.trim_end().to_string();
    log.lock().unwrap().push(if first.is_empty() {
        "(connected, nothing sent)".into()
    } else {
        first.clone()
    });
    // The rest of the head.
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) if line == "\r\n" || line == "\n" => break,
            Ok(_) => {}
        }
    }
    let body = format!("hello from {addr}\n");
    let mut stream = stream;
    let _ = write!(
        stream,
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
}

/// A UDP socket on 127.0.0.1 that reports whether any datagram arrived.
pub struct UdpSink {
    socket: UdpSocket,
    pub port: u16,
}

impl UdpSink {
    pub fn start() -> UdpSink {
        let socket = UdpSocket::bind(("127.0.0.1", 0)).unwrap();
        let port = socket.local_addr().unwrap().port();
        UdpSink { socket, port }
    }

    /// The first datagram within `wait`, if any.
    pub fn received(&self, wait: Duration) -> Option<Vec<u8>> {
        self.socket.set_read_timeout(Some(wait)).unwrap();
        let mut buf = [0u8; 512];
        self.socket.recv(&mut buf).ok().map(|n| buf[..n].to_vec())
    }
}
