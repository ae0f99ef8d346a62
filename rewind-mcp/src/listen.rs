//! The HTTP server's connections: a bound on how many are open, a time for a client to send a
//! request's headers (which is also how long a kept-alive connection waits for its next request),
//! and a time after which a connection on which nothing moves either way is closed. A client that
//! sends its headers a line at a time, or opens connections and sends nothing, holds them for
//! seconds, not forever.
//!
//! HTTP/1.1 only: every MCP client speaks it, and a TLS proxy in front speaks it to its backend.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

/// How the server bounds its connections.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    /// The most connections open at once; one more is answered 503 and closed.
    pub max_connections: usize,
    /// How long a client has to send a request's headers, and a kept-alive connection waits for
    /// its next request.
    pub header_read: Duration,
    /// How long a connection may go with no byte read or written (a stalled body, a client that
    /// stopped reading; an event stream sends a keep-alive every 15 s).
    pub idle: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            max_connections: 512,
            header_read: Duration::from_secs(10),
            idle: Duration::from_secs(120),
        }
    }
}

/// How long a connection's socket is still read from once its HTTP connection ended, and how
/// much of what the client still sends is read and dropped.
const LINGER: Duration = Duration::from_secs(2);
const LINGER_BYTES: usize = 4 << 20;

/// What a connection past the bound is told before it is closed.
const BUSY: &str =
    "rewind-mcp has as many connections open as it takes; try again in a few seconds.\n";

/// Serves `app` on `listener` within `limits` until `shutdown` completes, then lets each
/// connection finish its request in flight and waits for all of them to close.
pub async fn serve(
    listener: TcpListener,
    app: axum::Router,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let graceful = GracefulShutdown::new();
    let permits = Arc::new(Semaphore::new(limits.max_connections));
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // A connection that failed before it was accepted (reset, or out of descriptors
                // for a moment): the next one may do.
                Err(e) => {
                    tracing::warn!("a connection could not be accepted: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let Ok(permit) = permits.clone().try_acquire_owned() else {
            tokio::spawn(refuse(stream));
            continue;
        };
        let _ = stream.set_nodelay(true);
        let (io, last) = Watched::new(stream);
        let service = TowerToHyperService::new(app.clone());
        let connection = graceful.watch(builder.serve_connection(TokioIo::new(io), service));
        let idle = limits.idle;
        tokio::spawn(async move {
            tokio::select! {
                served = connection => {
                    if let Err(e) = served {
                        tracing::debug!("a connection ended: {e}");
                    }
                }
                () = stalled(last, idle) => tracing::debug!("a connection idle for {idle:?} was closed"),
            }
            drop(permit);
        });
    }
    graceful.shutdown().await;
    Ok(())
}

/// Answers a connection past the bound, briefly, and closes it. The request's head is read first
/// (a second at most): an answer sent before the request would be a protocol error to the client,
/// not a 503 it can wait on.
async fn refuse(mut stream: TcpStream) {
    use tokio::io::AsyncReadExt;
    let mut head = Vec::new();
    let mut buffer = [0u8; 1024];
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        while head.len() < 8192 && !head.windows(4).any(|w| w == b"\r\n\r\n") {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(n) => head.extend_from_slice(&buffer[..n]),
            }
        }
    })
    .await;
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 5\r\nContent-Type: text/plain\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{BUSY}",
        BUSY.len()
    );
    let _ = tokio::time::timeout(Duration::from_secs(1), stream.write_all(answer.as_bytes())).await;
    let _ = stream.shutdown().await;
}

/// Ends once nothing has moved on the connection for `idle`.
async fn stalled(last: Arc<Activity>, idle: Duration) {
    loop {
        let quiet = last.since();
        if quiet >= idle {
            return;
        }
        tokio::time::sleep(idle - quiet).await;
    }
}

/// When a byte last moved on a connection.
struct Activity {
    start: Instant,
    millis: AtomicU64,
}

impl Activity {
    fn touch(&self) {
        let now = self.start.elapsed().as_millis() as u64;
        self.millis.store(now, Ordering::Relaxed);
    }

    fn since(&self) -> Duration {
        let at = Duration::from_millis(self.millis.load(Ordering::Relaxed));
        self.start.elapsed().saturating_sub(at)
    }
}

/// A TCP stream that notes every read and write that moved bytes, and lingers once dropped.
struct Watched {
    /// Taken when it is dropped, to linger.
    stream: Option<TcpStream>,
    last: Arc<Activity>,
}

impl Watched {
    fn new(stream: TcpStream) -> (Watched, Arc<Activity>) {
        let last = Arc::new(Activity {
            start: Instant::now(),
            millis: AtomicU64::new(0),
        });
        (
            Watched {
                stream: Some(stream),
                last: last.clone(),
            },
            last,
        )
    }
}

impl Watched {
    fn stream(&mut self) -> Pin<&mut TcpStream> {
        Pin::new(
            self.stream
                .as_mut()
                .expect("a stream is taken only when it is dropped"),
        )
    }
}

impl Drop for Watched {
    /// hyper ends a connection early (a request's head too large: 431) while the client may still
    /// be sending; a socket closed with bytes unread is reset, and a client still writing then
    /// loses the answer. So the socket is read, and what comes dropped, for a moment first, as a
    /// web server's lingering close does.
    fn drop(&mut self) {
        if let (Some(stream), Ok(runtime)) =
            (self.stream.take(), tokio::runtime::Handle::try_current())
        {
            runtime.spawn(linger(stream));
        }
    }
}

/// Closes `stream` once the client stops sending, or after [`LINGER`] and [`LINGER_BYTES`].
async fn linger(mut stream: TcpStream) {
    use tokio::io::AsyncReadExt;
    let _ = stream.shutdown().await;
    let mut sink = vec![0u8; 16 << 10];
    let mut left = LINGER_BYTES;
    let _ = tokio::time::timeout(LINGER, async {
        while left > 0 {
            match stream.read(&mut sink).await {
                Ok(0) | Err(_) => break,
                Ok(n) => left = left.saturating_sub(n),
            }
        }
    })
    .await;
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = self.stream().poll_read(cx, buf);
        if buf.filled().len() > before {
            self.last.touch();
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let polled = self.stream().poll_write(cx, buf);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            self.last.touch();
        }
        polled
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.stream().poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.stream().poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let polled = self.stream().poll_write_vectored(cx, bufs);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            self.last.touch();
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.stream
            .as_ref()
            .is_some_and(TcpStream::is_write_vectored)
    }
}
