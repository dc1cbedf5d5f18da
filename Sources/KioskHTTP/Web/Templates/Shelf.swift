extension WebTemplates {
    /// `/web/{app}/`: the app's editions, each with its newest cover.
    static let shelf = #"""
    {{<layout}}{{$main}}
    <h1>{{appName}}</h1>
    {{^reader}}<p>{{t.anonymous}} {{t.sign_in_from_app}}</p>{{/reader}}
    <h2 id="editions">{{t.editions}}</h2>
    {{#content}}
    {{^editions}}<p>{{t.no_editions}}</p>{{/editions}}
    <ul class="grid" aria-labelledby="editions">
    {{#editions}}<li>
    <a href="{{issueURL}}"><img src="{{coverURL}}" alt="{{t.cover_of}} {{title}}, {{edition}}, {{date}}" width="300" height="400"></a>
    <h3><a href="{{archiveURL}}">{{title}} · {{edition}}</a></h3>
    <p class="meta">{{t.newest}}: <a href="{{issueURL}}">{{date}}</a></p>
    <p class="meta">{{access}}</p>
    </li>{{/editions}}
    </ul>
    {{/content}}
    {{/main}}{{/layout}}
    """#
}
