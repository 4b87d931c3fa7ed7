//! `mccbuild watch --serve ADDR`: the results site over HTTP, updated live, served by hyper (on
//! a small tokio runtime of its own thread; an organizer's browser or a few, not the public
//! internet: it binds to loopback unless told otherwise). `GET /events` is a server-sent-event
//! stream that sends the site's version whenever the results change, and
//! `GET /events?page=NAME` the version at which that page last changed; each page carries a few
//! lines of script, added as it is served, that follow its own and reload it when it changed
//! (an update re-renders only the pages whose inputs changed: the others stay as they are). The
//! pages read the same without JavaScript (they just do not update by themselves).
//!
//! Limits: a request's head is read within [`HEAD_TIMEOUT`] and holds at most [`MAX_HEADERS`]
//! headers in [`MAX_HEAD_BYTES`] (hyper answers 431 beyond); a request with a body is refused
//! (413) unread, any method but GET too (405); at most [`MAX_CONNECTIONS`] connections are
//! served at once (the others wait to be accepted).

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::{SocketAddr, TcpListener};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::{Channel, Either, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::{CACHE_CONTROL, CONNECTION, CONTENT_LENGTH, CONTENT_TYPE, TRANSFER_ENCODING};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::sync::{Semaphore, watch};

use mccbuild_scoring::scores::ScoresReport;

/// How long a client may take to send a request's head.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// The most bytes of a request's head (its line and headers).
pub const MAX_HEAD_BYTES: usize = 16 * 1024;
/// The most headers of a request.
pub const MAX_HEADERS: usize = 64;
/// The most connections served at once.
pub const MAX_CONNECTIONS: usize = 64;
/// How often an idle event stream says it is alive.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

#[derive(Default)]
struct Site {
    version: u64,
    /// Each file and the version at which it last changed (what its page's script compares).
    pages: HashMap<String, (Arc<String>, u64)>,
    scores: Arc<String>,
}

impl Site {
    /// The version an event stream reports: that of its page (a page no longer in the site: the
    /// site's version, so that the page reloads), or the site's.
    fn version_of(&self, page: Option<&str>) -> u64 {
        match page {
            Some(page) => self.pages.get(page).map_or(self.version, |p| p.1),
            None => self.version,
        }
    }
}

/// The site and the channel that tells the event streams of each update.
struct Shared {
    site: Mutex<Site>,
    updates: watch::Sender<u64>,
}

impl Shared {
    fn site(&self) -> std::sync::MutexGuard<'_, Site> {
        self.site.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The live site being served.
pub struct Server {
    addr: SocketAddr,
    shared: Arc<Shared>,
}

/// `ADDR` as given to `--serve`: `host:port`, or a port alone (on loopback).
pub fn parse_addr(addr: &str) -> String {
    if addr.parse::<u16>().is_ok() {
        format!("127.0.0.1:{addr}")
    } else {
        addr.to_string()
    }
}

impl Server {
    /// Binds `addr` ([`parse_addr`]) and serves an empty site there until the process ends.
    pub fn start(addr: &str) -> std::io::Result<Server> {
        let listener = TcpListener::bind(parse_addr(addr))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()?;
        // Made within the runtime, which registers it.
        let listener = {
            let _entered = runtime.enter();
            tokio::net::TcpListener::from_std(listener)?
        };
        let shared = Arc::new(Shared {
            site: Mutex::default(),
            updates: watch::Sender::new(0),
        });
        let serving = shared.clone();
        std::thread::spawn(move || runtime.block_on(accept(listener, serving)));
        Ok(Server { addr, shared })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Puts the files of an update in the site (`all`: these are the whole site, any other
    /// file is dropped), and tells every open page: a page reloads when its own file changed.
    pub fn publish(&self, files: &[(String, Arc<String>)], all: bool, scores: &ScoresReport) {
        let scores = Arc::new(serde_json::to_string(scores).unwrap_or_default());
        let version = {
            let mut site = self.shared.site();
            site.version += 1;
            let version = site.version;
            if all {
                site.pages.clear();
            }
            for (name, text) in files {
                site.pages.insert(name.clone(), (text.clone(), version));
            }
            site.scores = scores;
            version
        };
        self.shared.updates.send_replace(version);
    }
}

/// Accepts connections, [`MAX_CONNECTIONS`] served at once, each over HTTP/1.1 with the limits
/// of the module's documentation.
async fn accept(listener: tokio::net::TcpListener, shared: Arc<Shared>) {
    let connections = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(HEAD_TIMEOUT)
        .max_buf_size(MAX_HEAD_BYTES)
        .max_headers(MAX_HEADERS)
        .title_case_headers(true)
        .auto_date_header(false);
    loop {
        let Ok(permit) = connections.clone().acquire_owned().await else {
            return;
        };
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            // Out of file descriptors, a connection reset before it was accepted...: the
            // next one may do.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let shared = shared.clone();
        let connection = http.serve_connection(
            TokioIo::new(stream),
            hyper::service::service_fn(move |request| {
                let shared = shared.clone();
                async move { Ok::<_, Infallible>(respond(&request, &shared)) }
            }),
        );
        tokio::spawn(async move {
            let _ = connection.await;
            drop(permit);
        });
    }
}

type Body = Either<Full<Bytes>, Channel<Bytes>>;

/// A whole response: `status`, `kind` and `body`, not kept in caches, the connection closed
/// after it.
fn whole(status: StatusCode, kind: &str, body: impl Into<Bytes>) -> Response<Body> {
    let body: Bytes = body.into();
    let mut response = Response::new(Either::Left(Full::new(body.clone())));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    let value = |s: &str| {
        s.parse()
            .unwrap_or(hyper::header::HeaderValue::from_static(""))
    };
    headers.insert(CONTENT_TYPE, value(kind));
    headers.insert(CONTENT_LENGTH, body.len().into());
    headers.insert(CACHE_CONTROL, value("no-store"));
    headers.insert(CONNECTION, value("close"));
    response
}

fn respond(request: &Request<Incoming>, shared: &Arc<Shared>) -> Response<Body> {
    if request.method() != Method::GET {
        return whole(StatusCode::METHOD_NOT_ALLOWED, "text/plain", "only GET\n");
    }
    let has_body = request.headers().contains_key(TRANSFER_ENCODING)
        || request
            .headers()
            .get(CONTENT_LENGTH)
            .is_some_and(|n| n.as_bytes() != b"0");
    if has_body {
        return whole(
            StatusCode::PAYLOAD_TOO_LARGE,
            "text/plain",
            "a GET has no body\n",
        );
    }
    let path = request.uri().path().trim_start_matches('/');
    let path = if path.is_empty() { "index.html" } else { path };
    match path {
        "events" => {
            // `events?page=NAME`: that page's changes; `events`: every update.
            let watched = request.uri().query().and_then(|query| {
                query
                    .split('&')
                    .find_map(|p| p.strip_prefix("page="))
                    .map(percent_decoded)
            });
            events(shared.clone(), watched)
        }
        "scores.json" => {
            let scores = shared.site().scores.clone();
            whole(
                StatusCode::OK,
                "application/json",
                scores.as_bytes().to_vec(),
            )
        }
        _ => {
            let page = shared.site().pages.get(path).cloned();
            match page {
                Some((text, version)) => {
                    let text = live(path, &text, version);
                    let kind = if path.ends_with(".css") {
                        "text/css; charset=utf-8"
                    } else if path.ends_with(".js") {
                        "text/javascript; charset=utf-8"
                    } else {
                        "text/html; charset=utf-8"
                    };
                    whole(StatusCode::OK, kind, text)
                }
                None => whole(StatusCode::NOT_FOUND, "text/plain", "no such page\n"),
            }
        }
    }
}

/// The event stream of `page` (None: of the site): its version whenever it changes, and a
/// comment line every [`KEEP_ALIVE`] meanwhile.
fn events(shared: Arc<Shared>, page: Option<String>) -> Response<Body> {
    let (mut sender, body) = Channel::<Bytes>::new(1);
    let mut updates = shared.updates.subscribe();
    tokio::spawn(async move {
        let mut seen = 0;
        loop {
            let version = shared.site().version_of(page.as_deref());
            let message = if version != seen {
                seen = version;
                format!("data: {version}\n\n")
            } else {
                match tokio::time::timeout(KEEP_ALIVE, updates.changed()).await {
                    Ok(Ok(())) => continue,
                    // The server is gone.
                    Ok(Err(_)) => return,
                    Err(_) => ": keep-alive\n\n".to_string(),
                }
            };
            // The page went away.
            if sender.send_data(Bytes::from(message)).await.is_err() {
                return;
            }
        }
    });
    let mut response = Response::new(Either::Right(body));
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(
        CACHE_CONTROL,
        hyper::header::HeaderValue::from_static("no-store"),
    );
    headers.insert(
        CONNECTION,
        hyper::header::HeaderValue::from_static("keep-alive"),
    );
    response
}

/// An HTML page with the script that reloads it when its file changes (`version`: when it
/// last did).
fn live(name: &str, text: &str, version: u64) -> String {
    if !name.ends_with(".html") {
        return text.to_string();
    }
    let name = serde_json::to_string(name).unwrap_or_default();
    let script = format!(
        "<script>(function(){{var v=\"{version}\";var s=new EventSource(\"/events?page=\"+encodeURIComponent({name}));s.onmessage=function(e){{if(e.data!==v){{s.close();location.reload();}}}};}})();</script></body>"
    );
    text.replacen("</body>", &script, 1)
}

/// A query parameter's value with its `%XX` escapes decoded (as `encodeURIComponent` writes
/// them); an invalid escape is kept as it is.
fn percent_decoded(s: &str) -> String {
    percent_encoding::percent_decode_str(s)
        .decode_utf8_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_alone_binds_loopback() {
        assert_eq!(parse_addr("8017"), "127.0.0.1:8017");
        assert_eq!(parse_addr("0.0.0.0:80"), "0.0.0.0:80");
    }

    #[test]
    fn pages_get_the_reload_script_other_files_do_not() {
        let page = live("index.html", "<html><body><p>x</p></body></html>", 7);
        assert!(page.contains("var v=\"7\"") && page.ends_with("</body></html>"));
        assert!(
            page.contains("encodeURIComponent(\"index.html\")"),
            "{page}"
        );
        assert_eq!(live("style.css", "body{}", 7), "body{}");
    }

    /// A request sent as is on a new connection: the whole response, read until the server
    /// closes the connection.
    fn exchange(addr: SocketAddr, request: &[u8]) -> String {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        s.write_all(request).unwrap();
        let mut response = Vec::new();
        s.read_to_end(&mut response).unwrap();
        String::from_utf8_lossy(&response).into_owned()
    }

    /// A report with no podium (what `publish` serves as `scores.json`).
    fn scores() -> ScoresReport {
        serde_json::from_value(serde_json::json!({
            "contest": "c", "edition": "e", "confidence": {}, "scores": {},
            "podiums": {}, "awards": {}, "standings": {}
        }))
        .unwrap()
    }

    #[test]
    fn pages_are_served_whole_with_their_headers_and_the_connection_closed() {
        let server = Server::start("127.0.0.1:0").unwrap();
        let page = "<html><body>podium</body></html>";
        server.publish(
            &[
                ("index.html".into(), Arc::new(page.to_string())),
                ("style.css".into(), Arc::new("body{}".to_string())),
            ],
            true,
            &scores(),
        );
        // HTTP/1.1 without `Connection: close`: the server closes after its response.
        let response = exchange(server.addr(), b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        let (head, body) = response.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
        assert!(
            head.contains("Content-Type: text/html; charset=utf-8"),
            "{head}"
        );
        assert!(
            head.contains(&format!("Content-Length: {}", body.len())),
            "{head}"
        );
        assert!(head.contains("Cache-Control: no-store"), "{head}");
        assert!(head.contains("Connection: close"), "{head}");
        assert_eq!(body, live("index.html", page, 1));
        let css = exchange(server.addr(), b"GET /style.css HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(
            css.contains("text/css") && css.ends_with("\r\n\r\nbody{}"),
            "{css}"
        );
        let json = exchange(server.addr(), b"GET /scores.json HTTP/1.1\r\n\r\n");
        assert!(json.contains("application/json") && json.contains("\"contest\":\"c\""));
        let missing = exchange(server.addr(), b"GET /nope.html HTTP/1.1\r\n\r\n");
        assert!(missing.starts_with("HTTP/1.1 404") && missing.ends_with("no such page\n"));
    }

    #[test]
    fn requests_past_the_limits_are_refused() {
        let server = Server::start("127.0.0.1:0").unwrap();
        let post = exchange(
            server.addr(),
            b"POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc",
        );
        assert!(
            post.starts_with("HTTP/1.1 405") && post.ends_with("only GET\n"),
            "{post}"
        );
        let body = exchange(
            server.addr(),
            b"GET / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc",
        );
        assert!(body.starts_with("HTTP/1.1 413"), "{body}");
        let long = format!(
            "GET / HTTP/1.1\r\nX-Long: {}\r\n\r\n",
            "a".repeat(2 * MAX_HEAD_BYTES)
        );
        let refused = exchange(server.addr(), long.as_bytes());
        assert!(refused.starts_with("HTTP/1.1 431"), "{refused}");
        let many: String = (0..=MAX_HEADERS).map(|i| format!("X-{i}: y\r\n")).collect();
        let refused = exchange(
            server.addr(),
            format!("GET / HTTP/1.1\r\n{many}\r\n").as_bytes(),
        );
        assert!(refused.starts_with("HTTP/1.1 431"), "{refused}");
    }

    #[test]
    fn an_event_stream_says_each_version_of_its_page() {
        use std::io::{BufRead, Write};
        let server = Server::start("127.0.0.1:0").unwrap();
        let index = || {
            (
                "index.html".to_string(),
                Arc::new("<body></body>".to_string()),
            )
        };
        server.publish(&[index()], true, &scores());
        let mut s = std::net::TcpStream::connect(server.addr()).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        s.write_all(b"GET /events?page=index%2Ehtml HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        let mut lines = std::io::BufReader::new(s).lines().map_while(Result::ok);
        let mut next_data = || {
            lines
                .by_ref()
                .find_map(|l| l.strip_prefix("data: ").map(String::from))
                .unwrap()
        };
        assert_eq!(next_data(), "1");
        // Another file changed: not this page's version.
        server.publish(
            &[("other.html".into(), Arc::new(String::new()))],
            false,
            &scores(),
        );
        server.publish(&[index()], false, &scores());
        assert_eq!(next_data(), "3");
    }

    #[test]
    fn page_names_in_queries_are_decoded() {
        assert_eq!(percent_decoded("model-3-A%2BB.html"), "model-3-A+B.html");
        assert_eq!(percent_decoded("index.html"), "index.html");
        assert_eq!(percent_decoded("bad%zz"), "bad%zz");
    }
}
