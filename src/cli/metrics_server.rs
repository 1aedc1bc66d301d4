//! `watch --prometheus`: `/metrics` over HTTP (hyper on a one-thread tokio runtime, on a thread
//! of its own), answering each scrape from the watch's latest sample. Whoever can reach the
//! port cannot take it from the scraper: at most [`MAX_CONNECTIONS`] at once (for a new one, the
//! oldest that has not yet sent a request is closed, before any that has: [`victim`]), headers
//! within [`HEADER_READ_LIMIT`], a connection at most
//! [`CONNECTION_LIMIT`], and one encoded page shared by every reader of it.

use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response, StatusCode, header};
use hyper_util::rt::TokioIo;

use crate::export::prometheus::{self, Mode, Scrape};
use crate::model::traffic::{TrafficSample, WatchHeader};

/// What scrapes are answered from; the watch loop updates it after every sample.
pub struct Latest {
    pub header: Option<WatchHeader>,
    pub sample: Option<TrafficSample>,
    pub samples_total: u64,
    pub mode: Mode,
}

/// The running server; dropping it stops it.
pub struct MetricsServer {
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

/// `--prometheus PORT` (on 127.0.0.1) or `ADDR:PORT` (`0.0.0.0:9400`, `[::1]:9400`).
pub fn parse_listen(text: &str) -> Result<SocketAddr, String> {
    let t = text.trim();
    if let Ok(port) = t.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    t.parse::<SocketAddr>().map_err(|_| {
        format!(
            "--prometheus: {} is not PORT or ADDRESS:PORT (e.g. 9400, 127.0.0.1:9400, 0.0.0.0:9400, [::1]:9400)",
            crate::model::validate::quoted(text)
        )
    })
}

impl MetricsServer {
    /// Binds `addr` now (so that a port in use is the caller's error) and serves on a thread.
    pub fn start(addr: SocketAddr, latest: Arc<Mutex<Latest>>) -> std::io::Result<MetricsServer> {
        let listener = TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::Builder::new()
            .name("scalescope-metrics".into())
            .spawn(move || runtime.block_on(serve(listener, latest, flag)))?;
        Ok(MetricsServer {
            addr,
            stop,
            handle: Some(handle),
        })
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// The most connections served at once. A scraper needs one (Prometheus keeps it open between
/// scrapes); a few dashboards a few more. At the limit a connection is closed for the new one
/// ([`victim`]), so that held-open or half-sent connections cannot lock the scraper out.
const MAX_CONNECTIONS: usize = 64;
/// How long a client may take to send a request's headers (slowloris sends a byte a minute).
const HEADER_READ_LIMIT: Duration = Duration::from_secs(5);
/// How long one connection may stay open in all: long enough for keep-alive between scrapes
/// and a 13.7 MB answer on a slow link, short enough that a client that never reads its
/// answer gives its slot back.
const CONNECTION_LIMIT: Duration = Duration::from_secs(60);
/// How often a connection looks whether it was closed for a newer one.
const EVICTION_POLL: Duration = Duration::from_millis(50);

/// One open connection: its id, the flag that closes it, and whether it has sent a whole request.
struct Conn {
    id: u64,
    closed: Arc<AtomicBool>,
    asked: Arc<AtomicBool>,
}

/// The connections open now, oldest first.
type Open = Arc<Mutex<std::collections::VecDeque<Conn>>>;

/// Which of `open` (oldest first) to close for a new connection: the oldest that has not yet
/// sent a whole request (a half-sent or silent one: slowloris), else the oldest. A scraper whose
/// connection has asked is closed only when every other connection has asked too — a flood of
/// new half-open connections during a scrape takes each other's places, not the scraper's.
fn victim(asked: impl IntoIterator<Item = bool>) -> usize {
    asked.into_iter().position(|a| !a).unwrap_or(0)
}

async fn serve(listener: TcpListener, latest: Arc<Mutex<Latest>>, stop: Arc<AtomicBool>) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
        return;
    };
    let open: Open = Arc::default();
    let cache: Arc<Mutex<Option<Cached>>> = Arc::default();
    let mut next_id = 0u64;
    while !stop.load(Ordering::SeqCst) {
        let Ok(accepted) =
            tokio::time::timeout(Duration::from_millis(200), listener.accept()).await
        else {
            continue;
        };
        let Ok((stream, _)) = accepted else {
            // Out of descriptors or a connection reset before it was taken: try again shortly.
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let id = next_id;
        next_id += 1;
        let closed = Arc::new(AtomicBool::new(false));
        let asked = Arc::new(AtomicBool::new(false));
        if let Ok(mut o) = open.lock() {
            while o.len() >= MAX_CONNECTIONS {
                let v = victim(o.iter().map(|c| c.asked.load(Ordering::SeqCst)));
                if let Some(c) = o.remove(v) {
                    c.closed.store(true, Ordering::SeqCst);
                }
            }
            o.push_back(Conn {
                id,
                closed: closed.clone(),
                asked: asked.clone(),
            });
        }
        let (latest, cache, open) = (latest.clone(), cache.clone(), open.clone());
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                asked.store(true, Ordering::SeqCst);
                let answer = answer(&req, &latest, &cache);
                async move { Ok::<_, std::convert::Infallible>(answer) }
            });
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(HEADER_READ_LIMIT)
                .serve_connection(TokioIo::new(stream), service);
            let mut conn = std::pin::pin!(conn);
            let started = tokio::time::Instant::now();
            loop {
                match tokio::time::timeout(EVICTION_POLL, conn.as_mut()).await {
                    Ok(_) => break,
                    Err(_)
                        if closed.load(Ordering::SeqCst)
                            || started.elapsed() > CONNECTION_LIMIT =>
                    {
                        break;
                    }
                    Err(_) => {}
                }
            }
            if let Ok(mut o) = open.lock() {
                o.retain(|c| c.id != id);
            }
        });
    }
}

/// The last answer encoded, shared by every connection that asks for it: one copy of a
/// 13.7 MB page (1,024 GPUs × 64 links), however many clients are reading it.
struct Cached {
    samples_total: u64,
    openmetrics: bool,
    body: Bytes,
}

fn respond(
    status: StatusCode,
    content_type: &str,
    body: impl Into<Bytes>,
) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = status;
    if let Ok(v) = header::HeaderValue::from_str(content_type) {
        r.headers_mut().insert(header::CONTENT_TYPE, v);
    }
    r
}

fn answer(
    req: &Request<Incoming>,
    latest: &Mutex<Latest>,
    cache: &Mutex<Option<Cached>>,
) -> Response<Full<Bytes>> {
    const TEXT: &str = "text/plain; charset=utf-8";
    if req.method() != Method::GET && req.method() != Method::HEAD {
        return respond(StatusCode::METHOD_NOT_ALLOWED, TEXT, "only GET /metrics\n");
    }
    match req.uri().path() {
        "/metrics" => {}
        "/" => {
            return respond(
                StatusCode::OK,
                TEXT,
                "scalescope watch: the metrics are at /metrics\n",
            );
        }
        _ => {
            return respond(StatusCode::NOT_FOUND, TEXT, "not found: try /metrics\n");
        }
    }
    let Ok(l) = latest.lock() else {
        return respond(
            StatusCode::INTERNAL_SERVER_ERROR,
            TEXT,
            "the watch stopped\n",
        );
    };
    let Some(header) = &l.header else {
        return respond(
            StatusCode::SERVICE_UNAVAILABLE,
            TEXT,
            "scalescope watch is starting: no reading yet\n",
        );
    };
    let openmetrics = req
        .headers()
        .get(header::ACCEPT)
        .and_then(|a| a.to_str().ok())
        .is_some_and(|a| a.contains("application/openmetrics-text"));
    let content_type = if openmetrics {
        prometheus::OPENMETRICS_CONTENT_TYPE
    } else {
        prometheus::CONTENT_TYPE
    };
    let Ok(mut cached) = cache.lock() else {
        return respond(
            StatusCode::INTERNAL_SERVER_ERROR,
            TEXT,
            "the watch stopped\n",
        );
    };
    if let Some(c) = cached.as_ref()
        && c.samples_total == l.samples_total
        && c.openmetrics == openmetrics
    {
        return respond(StatusCode::OK, content_type, c.body.clone());
    }
    let scrape = Scrape {
        header,
        latest: l.sample.as_ref(),
        samples_total: l.samples_total,
        mode: l.mode,
    };
    let body = Bytes::from(if openmetrics {
        prometheus::encode_openmetrics(&scrape)
    } else {
        prometheus::encode(&scrape)
    });
    *cached = Some(Cached {
        samples_total: l.samples_total,
        openmetrics,
        body: body.clone(),
    });
    respond(StatusCode::OK, content_type, body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_that_asked_is_closed_last() {
        // Oldest first: the scraper (asked), then half-open ones.
        assert_eq!(victim([true, false, false]), 1);
        assert_eq!(victim([false, true, false]), 0);
        assert_eq!(victim([true, true, false]), 2);
        // Every one asked: the oldest.
        assert_eq!(victim([true, true, true]), 0);
    }

    #[test]
    fn listen_addresses_default_to_loopback() {
        assert_eq!(parse_listen("9400").unwrap().to_string(), "127.0.0.1:9400");
        assert_eq!(
            parse_listen("0.0.0.0:80").unwrap().to_string(),
            "0.0.0.0:80"
        );
        assert_eq!(
            parse_listen("[::1]:9400").unwrap().to_string(),
            "[::1]:9400"
        );
        let e = parse_listen("localhost:x").unwrap_err();
        assert!(
            e.starts_with("--prometheus: \"localhost:x\" is not PORT"),
            "{e}"
        );
        assert!(parse_listen("70000").is_err());
    }
}
