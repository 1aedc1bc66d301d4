//! `watch --prometheus`: `/metrics` over HTTP (hyper on a one-thread tokio runtime, on a thread
//! of its own), answering each scrape from the watch's latest sample.

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

async fn serve(listener: TcpListener, latest: Arc<Mutex<Latest>>, stop: Arc<AtomicBool>) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
        return;
    };
    while !stop.load(Ordering::SeqCst) {
        let Ok(accepted) =
            tokio::time::timeout(Duration::from_millis(200), listener.accept()).await
        else {
            continue;
        };
        let Ok((stream, _)) = accepted else {
            continue;
        };
        let latest = latest.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let answer = answer(&req, &latest);
                async move { Ok::<_, std::convert::Infallible>(answer) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

fn respond(status: StatusCode, content_type: &str, body: String) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(body)));
    *r.status_mut() = status;
    if let Ok(v) = header::HeaderValue::from_str(content_type) {
        r.headers_mut().insert(header::CONTENT_TYPE, v);
    }
    r
}

fn answer(req: &Request<Incoming>, latest: &Mutex<Latest>) -> Response<Full<Bytes>> {
    const TEXT: &str = "text/plain; charset=utf-8";
    if req.method() != Method::GET && req.method() != Method::HEAD {
        return respond(
            StatusCode::METHOD_NOT_ALLOWED,
            TEXT,
            "only GET /metrics\n".into(),
        );
    }
    match req.uri().path() {
        "/metrics" => {}
        "/" => {
            return respond(
                StatusCode::OK,
                TEXT,
                "scalescope watch: the metrics are at /metrics\n".into(),
            );
        }
        _ => {
            return respond(
                StatusCode::NOT_FOUND,
                TEXT,
                "not found: try /metrics\n".into(),
            );
        }
    }
    let Ok(l) = latest.lock() else {
        return respond(
            StatusCode::INTERNAL_SERVER_ERROR,
            TEXT,
            "the watch stopped\n".into(),
        );
    };
    let Some(header) = &l.header else {
        return respond(
            StatusCode::SERVICE_UNAVAILABLE,
            TEXT,
            "scalescope watch is starting: no reading yet\n".into(),
        );
    };
    let scrape = Scrape {
        header,
        latest: l.sample.as_ref(),
        samples_total: l.samples_total,
        mode: l.mode,
    };
    let openmetrics = req
        .headers()
        .get(header::ACCEPT)
        .and_then(|a| a.to_str().ok())
        .is_some_and(|a| a.contains("application/openmetrics-text"));
    if openmetrics {
        respond(
            StatusCode::OK,
            prometheus::OPENMETRICS_CONTENT_TYPE,
            prometheus::encode_openmetrics(&scrape),
        )
    } else {
        respond(
            StatusCode::OK,
            prometheus::CONTENT_TYPE,
            prometheus::encode(&scrape),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
