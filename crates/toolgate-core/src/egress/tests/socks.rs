//! SOCKS5 through the proxy: names, IPv4 and IPv6 destinations, and what it refuses.

use super::*;

fn domain(name: &str) -> Vec<u8> {
    let mut bytes = vec![3, name.len() as u8];
    bytes.extend_from_slice(name.as_bytes());
    bytes
}

async fn echo_through(client: &mut TcpStream) {
    client.write_all(b"ping").await.unwrap();
    client.shutdown().await.unwrap();
    assert_eq!(read_all(client).await, b"ping");
}

#[tokio::test]
async fn socks5_connects_to_a_name_and_to_an_ipv4_address() {
    let mut proxy = Proxy::start(&["localhost", "127.0.0.1"]).await;

    let named = echo_origin().await;
    let mut client = proxy.client().await;
    assert_eq!(
        socks_request(&mut client, 1, &domain("localhost"), named).await,
        0
    );
    echo_through(&mut client).await;
    let closed = proxy.next_closed().await;
    assert_eq!(closed.0, target("localhost", named));
    assert_eq!(
        closed.2,
        Traffic {
            sent: 4,
            received: 4
        }
    );

    let port = echo_origin().await;
    let mut client = proxy.client().await;
    assert_eq!(
        socks_request(&mut client, 1, &[1, 127, 0, 0, 1], port).await,
        0
    );
    echo_through(&mut client).await;
    assert_eq!(proxy.next_closed().await.0, target("127.0.0.1", port));

    assert_eq!(
        proxy.asked(),
        vec![
            (target("localhost", named), Via::Socks5),
            (target("127.0.0.1", port), Via::Socks5),
        ]
    );
    proxy.finish().await;
}

#[tokio::test]
async fn socks5_refuses_what_it_does_not_do() {
    let proxy = Proxy::start(&["127.0.0.1"]).await;
    // BIND and UDP ASSOCIATE: "command not supported".
    for command in [2, 3] {
        let mut client = proxy.client().await;
        assert_eq!(
            socks_request(&mut client, command, &[1, 127, 0, 0, 1], 80).await,
            7
        );
    }
    // Only username/password offered: no acceptable method.
    let mut client = proxy.client().await;
    client.write_all(&[5, 1, 0x02]).await.unwrap();
    assert_eq!(read_all(&mut client).await, [5, 0xFF]);
    assert!(proxy.asked().is_empty());
    assert!(proxy.finish().await.is_empty());
}

#[tokio::test]
async fn socks5_reads_an_ipv6_destination() {
    // Denied, so no IPv6 socket is needed: what matters is the target that was asked.
    let proxy = Proxy::start(&[]).await;
    let mut client = proxy.client().await;
    let mut address = vec![4];
    address.extend_from_slice(&"::1".parse::<std::net::Ipv6Addr>().unwrap().octets());
    assert_eq!(socks_request(&mut client, 1, &address, 8443).await, 2);
    assert_eq!(proxy.asked(), vec![(target("::1", 8443), Via::Socks5)]);
    proxy.finish().await;
}
