//! A minimal HTTP/1.1 layer over a tokio TCP stream, enough for the agent CLIs talking
//! to the scripted model server on loopback: one request per connection (every response
//! says `connection: close`), bodies by `content-length` or chunked.

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// Largest request body accepted: a CLI's request carries the whole conversation.
const MAX_BODY: usize = 64 * 1024 * 1024;
/// Largest header block accepted.
const MAX_HEADERS: usize = 256 * 1024;

/// One parsed request.
#[derive(Debug, Clone)]
pub struct Request {
    /// `GET`, `POST`, ...
    pub method: String,
    /// The path without the query string.
    pub path: String,
    /// Header names lower-cased, in order.
    pub headers: Vec<(String, String)>,
    /// The body, de-chunked.
    pub body: Vec<u8>,
}

impl Request {
    /// The first header named `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

fn bad(message: impl Into<String>) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, message.into())
}

/// Reads one request; `None` when the client closed the connection before sending one.
pub async fn read_request(stream: &mut TcpStream) -> std::io::Result<Option<Request>> {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    if reader.read_line(&mut line).await? == 0 {
        return Ok(None);
    }
    let mut parts = line.split_whitespace();
    let method = parts
        .next()
        .ok_or_else(|| bad("empty request line"))?
        .to_string();
    let target = parts.next().ok_or_else(|| bad("no request target"))?;
    let path = target.split('?').next().unwrap_or(target).to_string();
    let mut headers = Vec::new();
    let mut total = line.len();
    loop {
        line.clear();
        let n = reader.read_line(&mut line).await?;
        total += n;
        if n == 0 || total > MAX_HEADERS {
            return Err(bad("headers too long or cut off"));
        }
        let trimmed = line.trim_end_matches(['\r', '\n']);
        if trimmed.is_empty() {
            break;
        }
        if let Some((name, value)) = trimmed.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
        }
    }
    let mut request = Request {
        method,
        path,
        headers,
        body: Vec::new(),
    };
    if request
        .header("transfer-encoding")
        .is_some_and(|t| t.eq_ignore_ascii_case("chunked"))
    {
        loop {
            line.clear();
            reader.read_line(&mut line).await?;
            let size = usize::from_str_radix(line.trim().split(';').next().unwrap_or(""), 16)
                .map_err(|_| bad("bad chunk size"))?;
            if size == 0 {
                // Trailers, then the blank line.
                loop {
                    line.clear();
                    if reader.read_line(&mut line).await? == 0 || line.trim().is_empty() {
                        break;
                    }
                }
                break;
            }
            if request.body.len() + size > MAX_BODY {
                return Err(bad("body too large"));
            }
            let start = request.body.len();
            request.body.resize(start + size, 0);
            reader.read_exact(&mut request.body[start..]).await?;
            line.clear();
            reader.read_line(&mut line).await?;
        }
    } else if let Some(length) = request.header("content-length") {
        let length: usize = length.parse().map_err(|_| bad("bad content-length"))?;
        if length > MAX_BODY {
            return Err(bad("body too large"));
        }
        request.body.resize(length, 0);
        reader.read_exact(&mut request.body).await?;
    }
    Ok(Some(request))
}

/// What the server answers.
#[derive(Debug, Clone, PartialEq)]
pub enum Response {
    /// A JSON body with this status code.
    Json(u16, serde_json::Value),
    /// An error answer of the API: a JSON body with this status code, and a
    /// `retry-after` header of that many seconds when given.
    Error {
        /// The HTTP status.
        status: u16,
        /// The API's error object.
        body: serde_json::Value,
        /// Seconds for the `retry-after` header.
        retry_after: Option<u32>,
    },
    /// Server-sent events: (event name, JSON data); a `None` name writes a `data:` line
    /// alone, as the OpenAI APIs do, and `[DONE]` data is written raw.
    Events(Vec<(Option<String>, String)>),
}

/// The reason phrase of a status the server sends.
fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        409 => "Conflict",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        529 => "Overloaded",
        _ => "Error",
    }
}

/// A response as bytes: the head, the body, and how much of the body is its first
/// part (the first event of a stream, half of any other body).
fn encode(response: &Response) -> (String, Vec<u8>, usize) {
    let mut extra = String::new();
    let (status, content_type, body, first) = match response {
        Response::Json(status, value) => {
            let body = value.to_string();
            let half = body.len() / 2;
            (*status, "application/json", body, half)
        }
        Response::Error {
            status,
            body,
            retry_after,
        } => {
            if let Some(seconds) = retry_after {
                extra.push_str(&format!("retry-after: {seconds}\r\n"));
            }
            let body = body.to_string();
            let half = body.len() / 2;
            (*status, "application/json", body, half)
        }
        Response::Events(events) => {
            let mut body = String::new();
            let mut first = None;
            for (name, data) in events {
                if let Some(name) = name {
                    body.push_str("event: ");
                    body.push_str(name);
                    body.push('\n');
                }
                body.push_str("data: ");
                body.push_str(data);
                body.push_str("\n\n");
                first.get_or_insert(body.len());
            }
            (200, "text/event-stream", body, first.unwrap_or(0))
        }
    };
    let head = format!(
        "HTTP/1.1 {status} {}\r\ncontent-type: {content_type}\r\n\
         content-length: {}\r\ncache-control: no-cache\r\n{extra}connection: close\r\n\r\n",
        reason(status),
        body.len()
    );
    (head, body.into_bytes(), first)
}

/// Writes `response` and flushes; the connection is closed by the caller.
pub async fn write_response(stream: &mut TcpStream, response: &Response) -> std::io::Result<()> {
    let (head, body, _) = encode(response);
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(&body).await?;
    stream.flush().await
}

/// Writes the head of `response` (its full length announced) and the first part of
/// its body only: what a client has received when the connection then drops or the
/// answer stalls.
pub async fn write_first_part(stream: &mut TcpStream, response: &Response) -> std::io::Result<()> {
    let (head, body, first) = encode(response);
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(&body[..first.min(body.len())]).await?;
    stream.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::net::TcpListener;

    async fn round_trip(raw: &'static [u8]) -> Request {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let client = tokio::spawn(async move {
            let mut s = TcpStream::connect(addr).await.unwrap();
            s.write_all(raw).await.unwrap();
            let mut back = Vec::new();
            s.read_to_end(&mut back).await.unwrap();
            String::from_utf8(back).unwrap()
        });
        let (mut conn, _) = listener.accept().await.unwrap();
        let request = read_request(&mut conn).await.unwrap().unwrap();
        let events = Response::Events(vec![(Some("ping".into()), "{}".into())]);
        write_response(&mut conn, &events).await.unwrap();
        drop(conn);
        let answer = client.await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
        assert!(answer.ends_with("event: ping\ndata: {}\n\n"), "{answer}");
        request
    }

    async fn answer_of(response: Response, whole: bool) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let client = tokio::spawn(async move {
            let mut s = TcpStream::connect(addr).await.unwrap();
            let mut back = Vec::new();
            s.read_to_end(&mut back).await.unwrap();
            String::from_utf8(back).unwrap()
        });
        let (mut conn, _) = listener.accept().await.unwrap();
        if whole {
            write_response(&mut conn, &response).await.unwrap();
        } else {
            write_first_part(&mut conn, &response).await.unwrap();
        }
        drop(conn);
        client.await.unwrap()
    }

    #[tokio::test]
    async fn an_error_answer_carries_its_status_and_retry_after_and_a_cut_stream_its_first_event() {
        let error = Response::Error {
            status: 529,
            body: serde_json::json!({"type": "error"}),
            retry_after: Some(3),
        };
        let answer = answer_of(error, true).await;
        assert!(
            answer.starts_with("HTTP/1.1 529 Overloaded\r\n"),
            "{answer}"
        );
        assert!(answer.contains("\r\nretry-after: 3\r\n"), "{answer}");
        assert!(answer.ends_with("\r\n\r\n{\"type\":\"error\"}"), "{answer}");
        let events = Response::Events(vec![
            (Some("a".into()), "{}".into()),
            (Some("b".into()), "{}".into()),
        ]);
        let cut = answer_of(events, false).await;
        // The head announces the whole stream; only its first event came.
        assert!(cut.contains("content-length: 38\r\n"), "{cut}");
        assert!(cut.ends_with("\r\n\r\nevent: a\ndata: {}\n\n"), "{cut}");
    }

    #[tokio::test]
    async fn a_request_with_a_length_or_chunks_is_read_whole() {
        let r = round_trip(
            b"POST /v1/messages?beta=true HTTP/1.1\r\nContent-Length: 7\r\nX-A: b\r\n\r\n{\"a\":1}",
        )
        .await;
        assert_eq!(
            (r.method.as_str(), r.path.as_str()),
            ("POST", "/v1/messages")
        );
        assert_eq!(r.header("x-a"), Some("b"));
        assert_eq!(r.body, b"{\"a\":1}");
        let r = round_trip(
            b"POST /v1/responses HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n{\"a\r\n4\r\n\":1}\r\n0\r\n\r\n",
        )
        .await;
        assert_eq!(r.body, b"{\"a\":1}");
    }
}
