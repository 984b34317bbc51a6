//! How the demo servers (the agent, the judge, the collector) serve a
//! router: HTTP/1 through hyper, bounded as the run's own OTLP receiver is,
//! so a slow or flooding client cannot starve them:
//!
//! * a request's headers must arrive within [`HEADER_TIMEOUT`] (and an idle
//!   connection is closed after as long);
//! * its body within [`BODY_TIMEOUT`] of its headers (then the read fails,
//!   and the handler answers as for a broken body);
//! * at most [`MAX_CONNECTIONS`] connections at once: beyond, a connection
//!   is answered `503` and closed.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use hyper::body::{Frame, SizeHint};
use hyper::service::Service as _;

/// Longest a client may take to send a request's headers.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest a client may take to send a request's body, once its headers
/// are in.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(10);
/// Most connections served at once.
pub const MAX_CONNECTIONS: usize = 1024;

/// The bounds, as a value (the tests' are shorter).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bounds {
    pub(crate) header: Duration,
    pub(crate) body: Duration,
    pub(crate) connections: usize,
}

pub(crate) const BOUNDS: Bounds = Bounds {
    header: HEADER_TIMEOUT,
    body: BODY_TIMEOUT,
    connections: MAX_CONNECTIONS,
};

/// A request body that fails once its deadline has passed.
struct Deadline {
    inner: hyper::body::Incoming,
    sleep: Pin<Box<tokio::time::Sleep>>,
}

impl hyper::body::Body for Deadline {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if let Poll::Ready(frame) = Pin::new(&mut self.inner).poll_frame(cx) {
            return Poll::Ready(frame.map(|f| f.map_err(Into::into)));
        }
        match self.sleep.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Some(Err("the request body took too long".into()))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// Serves `app` on `listener` until `stop` resolves; then stops accepting,
/// lets the requests in flight finish, and returns.
pub(crate) async fn serve(
    listener: tokio::net::TcpListener,
    app: Router,
    bounds: Bounds,
    stop: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let slots = Arc::new(tokio::sync::Semaphore::new(bounds.connections));
    let (closing, closed) = tokio::sync::watch::channel(false);
    tokio::pin!(stop);
    loop {
        let (stream, _) = tokio::select! {
            () = &mut stop => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(_) => {
                    // Out of descriptors, say: try again shortly.
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            tokio::spawn(turn_away(stream));
            continue;
        };
        let app = app.clone();
        let mut closed = closed.clone();
        tokio::spawn(async move {
            let service =
                hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                    let req = req.map(|inner| Deadline {
                        inner,
                        sleep: Box::pin(tokio::time::sleep(bounds.body)),
                    });
                    hyper_util::service::TowerToHyperService::new(app.clone()).call(req)
                });
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(bounds.header)
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                _ = closed.changed() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.await;
                }
            }
            drop(slot);
        });
    }
    let _ = closing.send(true);
    // Every connection done: every slot back.
    let all = u32::try_from(bounds.connections).unwrap_or(u32::MAX);
    let _ = slots.acquire_many(all).await;
    Ok(())
}

/// A connection over the bound: answered 503 (try again later) and closed.
async fn turn_away(mut stream: tokio::net::TcpStream) {
    use tokio::io::AsyncWriteExt;
    let answer = b"HTTP/1.1 503 Service Unavailable\r\nretry-after: 1\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        let _ = stream.write_all(answer).await;
        let _ = stream.shutdown().await;
    })
    .await;
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::SocketAddr;
    use std::time::Instant;

    use super::*;

    /// A raw client: `head` at once, then `drip` bytes one at a time.
    fn client(addr: SocketAddr, head: &str, drip: usize, every: Duration) -> String {
        let mut c = std::net::TcpStream::connect(addr).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let _ = c.write_all(head.as_bytes());
        for _ in 0..drip {
            std::thread::sleep(every);
            if c.write_all(b"x").is_err() {
                break;
            }
        }
        let mut answer = Vec::new();
        let _ = c.read_to_end(&mut answer);
        String::from_utf8_lossy(&answer).into_owned()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn slow_and_surplus_clients_do_not_starve_a_demo_server() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = Router::new().route(
            "/echo",
            axum::routing::post(|body: Bytes| async move { body }),
        );
        let bounds = Bounds {
            header: Duration::from_millis(400),
            body: Duration::from_millis(600),
            connections: 4,
        };
        tokio::spawn(serve(listener, app, bounds, std::future::pending()));
        let head = format!(
            "POST /echo HTTP/1.1\r\nhost: {addr}\r\ncontent-length: 1000\r\nconnection: close\r\n\r\n"
        );
        // Two slow-loris clients: the body a byte every 200 ms.
        let slow: Vec<_> = (0..2)
            .map(|_| {
                let head = head.clone();
                std::thread::spawn(move || client(addr, &head, 1000, Duration::from_millis(200)))
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(100)).await;
        let started = Instant::now();
        let fine = tokio::task::spawn_blocking(move || {
            client(
                addr,
                "POST /echo HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok",
                0,
                Duration::ZERO,
            )
        })
        .await
        .unwrap();
        assert!(
            fine.starts_with("HTTP/1.1 200") && fine.ends_with("ok"),
            "{fine}"
        );
        assert!(
            started.elapsed() < Duration::from_millis(400),
            "{:?}",
            started.elapsed()
        );
        for c in slow {
            let answer = tokio::task::spawn_blocking(move || c.join().unwrap())
                .await
                .unwrap();
            assert!(!answer.contains(" 200 "), "{answer}");
        }
        // Cut off at the body deadline, not after the whole drip (200 s).
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        // Connections over the bound: 503 at once.
        let idle: Vec<_> = (0..4)
            .map(|_| std::net::TcpStream::connect(addr).unwrap())
            .collect();
        tokio::time::sleep(Duration::from_millis(100)).await;
        let surplus = tokio::task::spawn_blocking(move || {
            client(
                addr,
                "GET /echo HTTP/1.1\r\nhost: x\r\n\r\n",
                0,
                Duration::ZERO,
            )
        })
        .await
        .unwrap();
        assert!(surplus.starts_with("HTTP/1.1 503"), "{surplus}");
        drop(idle);
    }
}
