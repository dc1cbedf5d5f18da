import KioskModels
import Testing

@Suite struct ClientBudgetTests {
    @Test func aBurstThenTheRateThenTheWaitInWholeSeconds() {
        let budget = ClientBudget(burst: 5, perMinute: 30)   // one every 2 s
        for _ in 0..<5 { #expect(budget.take(client: "a", now: 100) == nil) }
        #expect(budget.take(client: "a", now: 100) == 2)
        #expect(budget.take(client: "a", now: 101) == 1, "half a token back after a second")
        #expect(budget.take(client: "a", now: 102) == nil)
        #expect(budget.take(client: "b", now: 102) == nil, "each client has its own")
        #expect(budget.take(client: "a", now: 1_000) == nil)
        for _ in 0..<4 { #expect(budget.take(client: "a", now: 1_000) == nil) }
        #expect(budget.take(client: "a", now: 1_000) != nil, "refills to the burst, no further")
    }

    @Test func noLimitForTheEmptyClientOrARateOfZero() {
        let budget = ClientBudget(burst: 1, perMinute: 60)
        for _ in 0..<100 { #expect(budget.take(client: "", now: 0) == nil) }
        for _ in 0..<100 { #expect(ClientBudget.unlimited.take(client: "a", now: 0) == nil) }
        #expect(budget.clientCount == 0)
    }

    @Test func aClockGoingBackNeitherTrapsNorGivesTokens() {
        let budget = ClientBudget(burst: 1, perMinute: 60)
        #expect(budget.take(client: "a", now: 1_000) == nil)
        #expect(budget.take(client: "a", now: 10) == 1)
        #expect(budget.take(client: "a", now: -.infinity) != nil)
    }

    @Test func theClientsKeptAreBoundedAndFullBucketsGoFirst() {
        let budget = ClientBudget(burst: 2, perMinute: 60)
        for index in 0..<(ClientBudget.maxClients - 1) { _ = budget.take(client: "c\(index)", now: 0) }
        #expect(budget.take(client: "busy", now: 1.9) == nil)
        #expect(budget.take(client: "busy", now: 1.9) == nil)
        #expect(budget.clientCount == ClientBudget.maxClients)
        #expect(budget.take(client: "newcomer", now: 2) == nil, "room is made at once")
        #expect(budget.clientCount == 2, "the buckets full again are dropped, the one refilling is kept")
        #expect(budget.take(client: "busy", now: 2) == 1, "and keeps its spent budget")
    }

    @Test func whenNoBucketIsFullAllAreDropped() {
        let budget = ClientBudget(burst: 2, perMinute: 60)
        for index in 0..<ClientBudget.maxClients { _ = budget.take(client: "c\(index)", now: 0) }
        #expect(budget.take(client: "newcomer", now: 0.5) == nil)
        #expect(budget.clientCount == 1)
    }
}
