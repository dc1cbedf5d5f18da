extension WebTemplates {
    /// A refusal or a missing page, said plainly, with the way back.
    static let message = #"""
    {{<layout}}{{$main}}
    {{#content}}
    <h1>{{heading}}</h1>
    {{#hint}}<p>{{.}}</p>{{/hint}}
    <p><a href="{{base}}/">{{t.back_to_shelf}}</a></p>
    {{/content}}
    {{/main}}{{/layout}}
    """#
}
