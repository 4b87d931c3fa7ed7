//! `mccbuild watch --serve ADDR`: the results site over HTTP, updated live. A small HTTP/1.1
//! server on std's TcpListener (one thread per connection; an organizer's browser or a few, not
//! the public internet: it binds to loopback unless told otherwise). `GET /events` is a
//! server-sent-event stream that sends the site's version whenever the results change, and
//! `GET /events?page=NAME` the version at which that page last changed; each page carries a few
//! lines of script, added as it is served, that follow its own and reload it when it changed
//! (an update re-renders only the pages whose inputs changed: the others stay as they are). The
//! pages read the same without JavaScript (they just do not update by themselves).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use mccbuild_scoring::scores::ScoresReport;

#[derive(Default)]
struct Site {
    version: u64,
    /// Each file and the version at which it last changed (what its page's script compares).
    pages: HashMap<String, (Arc<String>, u64)>,
    scores: Arc<String>,
}

type Shared = Arc<(Mutex<Site>, Condvar)>;

pub struct Server {
    addr: SocketAddr,
    shared: Shared,
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
    pub fn start(addr: &str) -> std::io::Result<Server> {
        let listener = TcpListener::bind(parse_addr(addr))?;
        let addr = listener.local_addr()?;
        let shared: Shared = Arc::default();
        let accept = shared.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let shared = accept.clone();
                std::thread::spawn(move || {
                    let _ = handle(stream, &shared);
                });
            }
        });
        Ok(Server { addr, shared })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Puts the files of an update in the site (`all`: these are the whole site, any other
    /// file is dropped), and tells every open page: a page reloads when its own file changed.
    pub fn publish(&self, files: &[(String, Arc<String>)], all: bool, scores: &ScoresReport) {
        let scores = Arc::new(serde_json::to_string(scores).unwrap_or_default());
        let (lock, changed) = &*self.shared;
        let mut site = lock.lock().unwrap_or_else(|e| e.into_inner());
        site.version += 1;
        let version = site.version;
        if all {
            site.pages.clear();
        }
        for (name, text) in files {
            site.pages.insert(name.clone(), (text.clone(), version));
        }
        site.scores = scores;
        changed.notify_all();
    }
}

/// An HTML page with the script that reloads it when its file changes (`version`: when it
/// last did).
fn live(name: &str, text: &str, version: u64) -> String {
    if !name.ends_with(".html") {
        return text.to_string();
    }
    let name = serde_json::to_string(name).unwrap_or_default();
    let script = format!(
        "<script>(function(){{var v=\"{version}\";var s=new EventSource(\"events?page=\"+encodeURIComponent({name}));s.onmessage=function(e){{if(e.data!==v){{s.close();location.reload();}}}};}})();</script></body>"
    );
    text.replacen("</body>", &script, 1)
}

fn respond(stream: &mut TcpStream, status: &str, kind: &str, body: &[u8]) -> std::io::Result<()> {
    write!(stream, "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n", body.len())?;
    stream.write_all(body)
}

fn handle(mut stream: TcpStream, shared: &Shared) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request = String::new();
    reader.read_line(&mut request)?;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" || line == "\n" {
            break;
        }
    }
    let mut parts = request.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or("/"));
    if method != "GET" {
        return respond(
            &mut stream,
            "405 Method Not Allowed",
            "text/plain",
            b"only GET\n",
        );
    }
    let target = target.split('#').next().unwrap_or("/");
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let path = path.trim_start_matches('/');
    // `events?page=NAME`: that page's changes; `events`: every update.
    let watched = query
        .split('&')
        .find_map(|p| p.strip_prefix("page="))
        .map(percent_decoded);
    let path = if path.is_empty() { "index.html" } else { path };
    let (lock, changed) = &**shared;
    match path {
        "events" => {
            write!(stream, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\nConnection: keep-alive\r\n\r\n")?;
            let mut seen = 0;
            loop {
                let version_of = |s: &Site| match &watched {
                    // A page no longer in the site: the site's version (the page reloads).
                    Some(page) => s.pages.get(page).map_or(s.version, |p| p.1),
                    None => s.version,
                };
                let version = {
                    let site = lock.lock().unwrap_or_else(|e| e.into_inner());
                    let (site, _) = changed
                        .wait_timeout_while(site, Duration::from_secs(15), |s| {
                            version_of(s) == seen
                        })
                        .unwrap_or_else(|e| e.into_inner());
                    version_of(&site)
                };
                if version == seen {
                    stream.write_all(b": keep-alive\n\n")?;
                } else {
                    seen = version;
                    write!(stream, "data: {version}\n\n")?;
                }
                stream.flush()?;
            }
        }
        "scores.json" => {
            let body = lock
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .scores
                .clone();
            respond(&mut stream, "200 OK", "application/json", body.as_bytes())
        }
        _ => {
            let page = lock
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .pages
                .get(path)
                .cloned();
            match page {
                Some((text, version)) => {
                    let text = live(path, &text, version);
                    let kind = if path.ends_with(".css") {
                        "text/css; charset=utf-8"
                    } else {
                        "text/html; charset=utf-8"
                    };
                    respond(&mut stream, "200 OK", kind, text.as_bytes())
                }
                None => respond(
                    &mut stream,
                    "404 Not Found",
                    "text/plain",
                    b"no such page\n",
                ),
            }
        }
    }
}

/// A query parameter's value with its `%XX` escapes decoded (as `encodeURIComponent` writes
/// them); an invalid escape is kept as it is.
fn percent_decoded(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(a), Some(b)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((a * 16 + b) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
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

    #[test]
    fn page_names_in_queries_are_decoded() {
        assert_eq!(percent_decoded("model-3-A%2BB.html"), "model-3-A+B.html");
        assert_eq!(percent_decoded("index.html"), "index.html");
        assert_eq!(percent_decoded("bad%zz"), "bad%zz");
    }
}
