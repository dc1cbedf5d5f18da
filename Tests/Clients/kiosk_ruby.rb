# Ruby's xmlrpc/client through all six kiosk methods on the sample data.   ruby kiosk_ruby.rb URL -> JSON report
require "json"
require "xmlrpc/client"

client = XMLRPC::Client.new2(ARGV[0], nil, 120)   # its default 30 s read timeout is too short beside the other suites
report = {}
editions = client.call("epquiosc.getEdicions", "quiosc", "")
report["editions"] = editions.map { |e| [e["id"], e["ordre"], e["data"]] }
report["types"] = editions.flat_map { |e| e.values.map { |v| v.class.name } }.uniq
report["issues"] = client.call("epquiosc.getDarrersEdicio", "quiosc", "", "8", "", 30, "DESC").map { |i| i["data"] }
anon = client.call("epusuaris.registrar", "quiosc", "ruby-device", "", "", { "model" => "test" }, "Linux")
report["registrar"] = [anon["usuari_id"], anon["demos"], anon["edicions"].keys.sort.join(",")]
ok, fault = client.call2("epquiosc.getEdicio", "quiosc", anon["iden_key"], "1", "2025-06-02", "", "Linux")
report["not_entitled"] = fault.faultCode
demo = client.call("epusuaris.consumirDemo", "quiosc", "ruby-device", anon["iden_key"], {}, "Linux", 0)
report["demo"] = [demo["servir_demo"], demo["demos"], demo["error_msg"]]
issue = client.call("epquiosc.getEdicio", "quiosc", anon["iden_key"], "1", "2025-06-02", "", "Linux")
report["issue"] = [issue["id"], issue["data"], issue["pagines"].size.to_s, issue["zip_sha256"].size.to_s, (issue["zip_size"].to_i > 0).to_s]
report["seccions"] = issue["pagines"].map { |p| p["seccio"] }
hash = client.call("epusuaris.hashQuiosc", "presencia", "", "", "portada")
report["hash"] = [hash["url_base"], hash["hash"], hash["url"]]
ok, wrong = client.call2("epusuaris.registrar", "quiosc", "ruby-device", "nobody", "nothing", {}, "Linux")
report["wrong_credentials"] = wrong.faultCode
ok, unknown = client.call2("epquiosc.getEdicions", "no-such-app", "")
report["unknown_app"] = unknown.faultCode
ok, not_offered = client.call2("epquiosc.getDarrersEdicio", "presencia", "", "1", "", 5, "DESC")
report["not_offered"] = not_offered.faultCode
ok, no_issue = client.call2("epquiosc.getEdicio", "quiosc", "", "8", "1999-01-01", "", "")
report["no_issue"] = no_issue.faultCode
puts JSON.generate(report)
