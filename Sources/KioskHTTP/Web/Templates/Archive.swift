extension WebTemplates {
    /// `/web/{app}/edicio/{id}?mes=YYYY-MM`: one month of an edition's issues.
    static let archive = #"""
    {{<layout}}{{$main}}
    {{#content}}
    <h1>{{t.archive_of}} {{title}} · {{edition}}</h1>
    <nav class="months" aria-label="{{t.archive}}">
    <span>{{#previousURL}}<a href="{{previousURL}}" rel="prev">← {{t.previous_month}} ({{previousLabel}})</a>{{/previousURL}}</span>
    <h2 id="month">{{monthLabel}}</h2>
    <span>{{#nextURL}}<a href="{{nextURL}}" rel="next">{{t.next_month}} ({{nextLabel}}) →</a>{{/nextURL}}</span>
    </nav>
    {{^issues}}<p>{{t.no_issues_in_month}}</p>{{/issues}}
    <ul class="grid" aria-labelledby="month">
    {{#issues}}<li><a href="{{url}}"><img src="{{coverURL}}" alt="{{t.cover_of}} {{date}}" width="300" height="400" loading="lazy">{{date}}</a></li>{{/issues}}
    </ul>
    {{/content}}
    {{/main}}{{/layout}}
    """#
}
