extension WebTemplates {
    /// `/web/{app}/compte`: who the reader is, the subscriptions they hold and their store purchases in the app.
    static let account = #"""
    {{<layout}}{{$main}}
    <h1>{{t.account}}</h1>
    {{^reader}}<p>{{t.anonymous}}</p><p>{{t.sign_in_from_app}}</p>{{/reader}}
    {{#content}}
    <dl><dt>{{t.signed_in_as}}</dt><dd>{{name}} ({{username}})</dd>{{#email}}<dt>E-mail</dt><dd>{{email}}</dd>{{/email}}</dl>
    <h2 id="subscriptions">{{t.subscriptions}}</h2>
    {{^subscriptions}}<p>{{t.no_subscriptions}}</p>{{/subscriptions}}
    <table aria-labelledby="subscriptions">{{#hasSubscriptions}}<thead><tr><th scope="col">{{t.edition}}</th><th scope="col">{{t.until}}</th></tr></thead>{{/hasSubscriptions}}
    <tbody>{{#subscriptions}}<tr><td>{{edition}}</td><td><time datetime="{{until}}">{{until}}</time></td></tr>{{/subscriptions}}</tbody>
    </table>
    <h2 id="purchases">{{t.purchases}}</h2>
    {{^hasPurchases}}<p>{{t.no_purchases}}</p>{{/hasPurchases}}
    {{#hasPurchases}}<table aria-labelledby="purchases"><thead><tr><th scope="col">{{t.product}}</th><th scope="col">{{t.kind}}</th><th scope="col">{{t.state}}</th><th scope="col">{{t.details}}</th></tr></thead>
    <tbody>{{#purchases}}<tr class="purchase"><td>{{product}}</td><td>{{kind}}</td><td class="{{stateName}}">{{state}}</td><td>{{details}}</td></tr>{{/purchases}}</tbody>
    </table>{{/hasPurchases}}
    <form method="post" action="{{base}}/sortir-arreu"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit">{{t.sign_out_everywhere}}</button></form>
    {{/content}}
    {{/main}}{{/layout}}
    """#
}
