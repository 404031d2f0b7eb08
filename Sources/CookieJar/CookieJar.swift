// CookieJar: cookies as a browser keeps them. RFC 6265bis storage and retrieval
// (`CookieStore`), Set-Cookie and cookie-date parsing (`SetCookie`, `CookieDate`), and where
// each cookie a recorded request carried came from (`CookieProvenance`, docs/model.md,
// "Where a cookie came from").
