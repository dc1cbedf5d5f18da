extension WebTemplates {
    /// `/web/{app}/edicio/{id}/{date}`: the issue's pages, their PDFs and the bundle.
    static let issue = #"""
    {{<layout}}{{$main}}
    {{#content}}
    <h1>{{title}} · {{edition}} · {{date}}</h1>
    <p><a href="{{archiveURL}}">{{t.archive_of}} {{edition}}</a></p>
    <p><a href="{{bundleURL}}" download>{{t.download_bundle}}</a> <span class="meta">{{bundleSize}} {{t.bytes}} · SHA-256 <code>{{bundleSHA256}}</code></span></p>
    <h2 id="pages">{{t.pages}}</h2>
    <ol class="grid" aria-labelledby="pages">
    {{#pages}}<li id="p{{number}}">
    <a href="{{jpgAURL}}"><img src="{{jpgURL}}" alt="{{t.page}} {{number}} ({{section}})" width="300" height="400" loading="lazy"></a>
    <p class="meta">{{t.page}} {{number}} · {{section}}</p>
    <p><a class="pdf" href="{{pdfURL}}" download>{{t.pdf}} {{number}}</a> · <a href="{{jpgAURL}}">{{t.high_resolution}}</a></p>
    </li>{{/pages}}
    </ol>
    {{/content}}
    {{/main}}{{/layout}}
    """#
}
