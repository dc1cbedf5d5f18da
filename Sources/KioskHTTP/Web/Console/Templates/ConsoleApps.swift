extension WebTemplates {
    static let consoleApps = #"""
    {{<console_layout}}{{$main}}
    {{#content}}
    <h1>{{t.apps}}</h1>
    {{^editable}}<p class="notice">{{t.managed_by_file}}</p>{{/editable}}
    {{#apps}}
    <section id="app-{{key}}" aria-labelledby="h-{{key}}">
    <h2 id="h-{{key}}">{{name}} <code>{{key}}</code></h2>
    <form method="post" action="/admin/apps/{{key}}">
    <input type="hidden" name="csrf" value="{{frame.csrf}}"><input type="hidden" name="action" value="quota">
    <label for="quota-{{key}}">{{t.demo_quota}}</label>
    <input id="quota-{{key}}" name="demo_quota" type="number" min="0" value="{{demoQuota}}"{{^editable}} disabled{{/editable}}>
    {{#editable}}<button type="submit">{{t.save}}</button>{{/editable}}
    </form>
    <h3>{{t.lines}}</h3>
    <table><thead><tr><th scope="col">{{t.order}}</th><th scope="col">{{t.edition}}</th><th scope="col">{{t.access}}</th><th scope="col"></th></tr></thead><tbody>
    {{#lines}}<tr><td>{{order}}</td><td>{{name}}</td><td>{{#free}}{{t.free}}{{/free}}{{^free}}{{t.subscribers}}{{/free}}</td><td>
    {{#editable}}
    <form class="inline" method="post" action="/admin/apps/{{key}}"><input type="hidden" name="csrf" value="{{frame.csrf}}"><input type="hidden" name="edition" value="{{edition}}"><button name="action" value="up" aria-label="{{t.up}}: {{name}}">↑</button><button name="action" value="down" aria-label="{{t.down}}: {{name}}">↓</button><button name="action" value="access">{{#free}}{{t.subscribers}}{{/free}}{{^free}}{{t.free}}{{/free}}</button><button name="action" value="remove">{{t.remove}}</button></form>
    {{/editable}}
    </td></tr>{{/lines}}
    </tbody></table>
    {{#editable}}
    <form method="post" action="/admin/apps/{{key}}">
    <input type="hidden" name="csrf" value="{{frame.csrf}}"><input type="hidden" name="action" value="add">
    <label for="add-{{key}}">{{t.add_line}}</label>
    <select id="add-{{key}}" name="edition">{{#otherEditions}}<option value="{{id}}">{{name}}</option>{{/otherEditions}}</select>
    <label for="access-{{key}}">{{t.access}}</label>
    <select id="access-{{key}}" name="access"><option value="subscribers">{{t.subscribers}}</option><option value="free">{{t.free}}</option></select>
    <button type="submit">{{t.add}}</button>
    </form>
    {{/editable}}
    </section>
    {{/apps}}
    {{/content}}
    {{/main}}{{/console_layout}}
    """#
}
