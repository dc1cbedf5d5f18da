extension WebTemplates {
    /// The frame of every page: language, skip link, header navigation, the signed-in reader, `{{$main}}`.
    static let layout = #"""
    <!doctype html>
    <html lang="{{lang}}">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>{{title}} · {{appName}}</title>
    <style>
    :root{--ink:#1d1d1f;--muted:#5b5b66;--line:#d8d8de;--accent:#0b57d0;--bg:#fafafa}
    *{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,sans-serif;color:var(--ink);background:var(--bg)}
    a{color:var(--accent)}a:focus,button:focus{outline:3px solid #f4b400;outline-offset:2px}
    .skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:1rem;background:#fff;padding:.5rem;z-index:1}
    header{background:#fff;border-bottom:1px solid var(--line);padding:.75rem 1rem;display:flex;flex-wrap:wrap;gap:1rem;align-items:center;justify-content:space-between}
    header nav ul{list-style:none;margin:0;padding:0;display:flex;gap:1rem;flex-wrap:wrap}
    header .who{margin:0;color:var(--muted);display:flex;gap:.5rem;align-items:center;flex-wrap:wrap}
    header form{display:inline}button{font:inherit;padding:.25rem .75rem;border:1px solid var(--line);border-radius:4px;background:#fff;cursor:pointer}
    main{max-width:72rem;margin:0 auto;padding:1rem}
    h1{font-size:1.6rem;margin:.5rem 0 1rem}h2{font-size:1.2rem}
    .notice{background:#fff8e1;border:1px solid #f4b400;padding:.75rem 1rem;border-radius:4px}
    .grid{list-style:none;padding:0;display:grid;grid-template-columns:repeat(auto-fill,minmax(10rem,1fr));gap:1rem}
    .grid li{background:#fff;border:1px solid var(--line);border-radius:6px;padding:.5rem}
    .grid img{width:100%;height:auto;display:block;aspect-ratio:3/4;object-fit:cover;background:#eee}
    .meta{color:var(--muted);font-size:.9rem;margin:.25rem 0}
    .months{display:flex;justify-content:space-between;gap:1rem;margin:1rem 0}
    code{word-break:break-all;font-size:.85rem}
    </style>
    </head>
    <body>
    <a class="skip" href="#main">{{t.skip}}</a>
    <header>
    <nav aria-label="{{appName}}"><ul>
    <li><a href="{{base}}/">{{appName}}</a></li>
    <li><a href="{{base}}/compte">{{t.account}}</a></li>
    </ul></nav>
    <form role="search" method="get" action="{{base}}/cerca"><label for="search-q">{{t.search}}</label>
    <input id="search-q" name="q" type="search" maxlength="500" value="{{query}}"><button type="submit">{{t.search}}</button></form>
    {{#reader}}<p class="who">{{t.signed_in_as}} <strong>{{name}}</strong>
    <form method="post" action="{{base}}/sortir"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit">{{t.sign_out}}</button></form></p>{{/reader}}
    </header>
    <main id="main" tabindex="-1">
    {{#notice}}<p class="notice" role="status">{{.}}</p>{{/notice}}
    {{$main}}{{/main}}
    </main>
    </body>
    </html>
    """#
}
