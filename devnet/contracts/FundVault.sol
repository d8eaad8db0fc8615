// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {FundShareToken} from "./FundShareToken.sol";
import {IFundPolicy} from "./IFundPolicy.sol";
import {DividendDistributor} from "./DividendDistributor.sol";

/// @title FundVault
/// @notice One fund: it takes subscription (base asset) and redemption (shares) requests for the
///         open epoch and settles them once a day at the epoch's NAV per share. At settlement the
///         owner (the fund's multisig) reports the strategies' realised P&L; the fund's policy splits
///         it between holders (forwarded to the dividend distributor), the reserve and the NAV.
///         The vault keeps the strategy allocation table and three pausable modules.
contract FundVault is Ownable {
    using SafeERC20 for IERC20;

    struct StrategyAllocation {
        address strategy;
        uint16 targetBps;
        uint16 capBps;
        bool active;
    }

    struct Request {
        address account;
        uint256 amount;
    }

    uint8 public constant MODULE_SUBSCRIPTIONS = 0;
    uint8 public constant MODULE_REDEMPTIONS = 1;
    uint8 public constant MODULE_CLAIMS = 2;
    uint8 private constant MODULE_COUNT = 3;
    uint16 private constant BPS = 10_000;
    /// @dev navPerShare carries 6 decimals: 1_000_000 is one base-asset unit per share.
    uint256 private constant NAV_ONE = 1e6;

    event SubscriptionRequested(address indexed investor, uint64 indexed epoch, uint256 assets);
    event RedemptionRequested(address indexed investor, uint64 indexed epoch, uint256 shares);
    event EpochSettled(
        uint64 indexed epoch,
        uint256 navPerShare,
        uint256 assetsIn,
        uint256 sharesMinted,
        uint256 sharesBurned,
        uint256 assetsOut,
        uint256 totalAssets,
        uint256 totalSupply,
        uint256 reserveBalance
    );
    event StrategyAllocationSet(address indexed strategy, uint16 targetBps, uint16 capBps, bool active);
    event ModulePaused(uint8 indexed module);
    event ModuleUnpaused(uint8 indexed module);
    event FundClosed();

    error ModuleIsPaused(uint8 module);
    error ModuleNotPaused(uint8 module);
    error UnknownModule(uint8 module);
    error FundIsClosed();
    error ZeroAmount();
    error InvalidAllocation(address strategy, uint16 targetBps, uint16 capBps);
    error AllocationExceedsTotal(uint256 totalTargetBps);
    error PolicyBrokeInvariant();
    error NavIsZero();

    IERC20 public immutable asset;
    FundShareToken public immutable shareToken;
    IFundPolicy public immutable policy;
    DividendDistributor public immutable distributor;

    /// @notice The epoch open for requests; settle() closes it and opens the next. Epochs start at 1.
    uint64 public currentEpoch = 1;
    /// @notice Assets backing the shares (the NAV basis), in base-asset units.
    uint256 public totalAssets;
    /// @notice The reserve pool, kept apart from the NAV between the policy's floor and cap.
    uint256 public reserveBalance;
    /// @notice NAV lost to past losses and not yet recovered; profits restore it before any split.
    uint256 public lossCarryForward;
    bool public closed;

    bool[MODULE_COUNT] private _paused;
    StrategyAllocation[] private _strategies;
    mapping(address strategy => uint256 indexPlusOne) private _strategyIndex;
    mapping(uint64 epoch => Request[]) private _subscriptions;
    mapping(uint64 epoch => Request[]) private _redemptions;

    constructor(
        IERC20 asset_,
        IFundPolicy policy_,
        DividendDistributor distributor_,
        address multisig,
        string memory shareName,
        string memory shareSymbol
    ) Ownable(multisig) {
        asset = asset_;
        policy = policy_;
        distributor = distributor_;
        shareToken = new FundShareToken(shareName, shareSymbol);
    }

    modifier whenActive(uint8 module) {
        if (_paused[module]) revert ModuleIsPaused(module);
        _;
    }

    // ---- requests ------------------------------------------------------------------------------

    function requestSubscription(uint256 assets) external whenActive(MODULE_SUBSCRIPTIONS) {
        if (closed) revert FundIsClosed();
        if (assets == 0) revert ZeroAmount();
        asset.safeTransferFrom(msg.sender, address(this), assets);
        _subscriptions[currentEpoch].push(Request(msg.sender, assets));
        emit SubscriptionRequested(msg.sender, currentEpoch, assets);
    }

    function requestRedemption(uint256 shares) external whenActive(MODULE_REDEMPTIONS) {
        if (shares == 0) revert ZeroAmount();
        shareToken.escrow(msg.sender, shares);
        _redemptions[currentEpoch].push(Request(msg.sender, shares));
        emit RedemptionRequested(msg.sender, currentEpoch, shares);
    }

    // ---- settlement ----------------------------------------------------------------------------

    /// @notice Settles the open epoch. `pnl` is the strategies' realised P&L since the last
    ///         settlement: a profit is paid in by the caller, a loss is paid out to the caller (the
    ///         multisig stands in for the strategy book's custody).
    function settle(int256 pnl) external onlyOwner {
        uint64 epoch = currentEpoch;
        _applyPnl(pnl);

        uint256 supply = shareToken.totalSupply();
        uint256 navPerShare = supply == 0 ? NAV_ONE : (totalAssets * NAV_ONE) / supply;
        if (navPerShare == 0) revert NavIsZero();

        (uint256 assetsIn, uint256 sharesMinted) = _settleSubscriptions(epoch, navPerShare);
        (uint256 sharesBurned, uint256 assetsOut) = _settleRedemptions(epoch, navPerShare);

        currentEpoch = epoch + 1;
        emit EpochSettled(
            epoch,
            navPerShare,
            assetsIn,
            sharesMinted,
            sharesBurned,
            assetsOut,
            totalAssets,
            shareToken.totalSupply(),
            reserveBalance
        );
    }

    /// @dev High-water mark: a profit first restores NAV lost earlier (lossCarryForward); only the
    ///      profit beyond it is split by the policy, so holders are not paid out of a drawdown.
    function _applyPnl(int256 pnl) private {
        if (pnl > 0) asset.safeTransferFrom(msg.sender, address(this), uint256(pnl));
        int256 distributable = pnl;
        if (pnl > 0 && lossCarryForward > 0) {
            uint256 recovered = uint256(pnl) < lossCarryForward ? uint256(pnl) : lossCarryForward;
            lossCarryForward -= recovered;
            totalAssets += recovered;
            distributable -= int256(recovered);
        }
        (uint256 toHolders, int256 reserveDelta, int256 navDelta) = policy.split(
            distributable,
            totalAssets,
            reserveBalance
        );
        if (int256(toHolders) + reserveDelta + navDelta != distributable) revert PolicyBrokeInvariant();
        if (navDelta < 0) lossCarryForward += uint256(-navDelta);
        totalAssets = uint256(int256(totalAssets) + navDelta);
        reserveBalance = uint256(int256(reserveBalance) + reserveDelta);
        if (toHolders > 0) {
            asset.forceApprove(address(distributor), toHolders);
            distributor.deposit(address(this), toHolders);
        }
        if (pnl < 0) asset.safeTransfer(msg.sender, uint256(-pnl));
    }

    function _settleSubscriptions(
        uint64 epoch,
        uint256 navPerShare
    ) private returns (uint256 assetsIn, uint256 sharesMinted) {
        Request[] storage requests = _subscriptions[epoch];
        for (uint256 i = 0; i < requests.length; i++) {
            uint256 shares = (requests[i].amount * NAV_ONE) / navPerShare;
            shareToken.mint(requests[i].account, shares);
            assetsIn += requests[i].amount;
            sharesMinted += shares;
        }
        totalAssets += assetsIn;
    }

    function _settleRedemptions(
        uint64 epoch,
        uint256 navPerShare
    ) private returns (uint256 sharesBurned, uint256 assetsOut) {
        Request[] storage requests = _redemptions[epoch];
        for (uint256 i = 0; i < requests.length; i++) {
            uint256 assets = (requests[i].amount * navPerShare) / NAV_ONE;
            sharesBurned += requests[i].amount;
            assetsOut += assets;
            asset.safeTransfer(requests[i].account, assets);
        }
        if (sharesBurned > 0) shareToken.burn(address(this), sharesBurned);
        totalAssets -= assetsOut;
    }

    /// @notice Requests waiting in `epoch`: (subscribed assets, shares to redeem, request count).
    function pendingRequests(uint64 epoch) external view returns (uint256 assets, uint256 shares, uint256 count) {
        Request[] storage subs = _subscriptions[epoch];
        Request[] storage reds = _redemptions[epoch];
        for (uint256 i = 0; i < subs.length; i++) assets += subs[i].amount;
        for (uint256 i = 0; i < reds.length; i++) shares += reds[i].amount;
        count = subs.length + reds.length;
    }

    // ---- strategies ----------------------------------------------------------------------------

    /// @notice Adds or updates a strategy's allocation. The active targets may not exceed 100%.
    function setStrategy(address strategy, uint16 targetBps, uint16 capBps, bool active) external onlyOwner {
        if (strategy == address(0) || targetBps > capBps || capBps > BPS) {
            revert InvalidAllocation(strategy, targetBps, capBps);
        }
        uint256 index = _strategyIndex[strategy];
        if (index == 0) {
            _strategies.push(StrategyAllocation(strategy, targetBps, capBps, active));
            _strategyIndex[strategy] = _strategies.length;
        } else {
            _strategies[index - 1] = StrategyAllocation(strategy, targetBps, capBps, active);
        }
        uint256 totalTarget;
        for (uint256 i = 0; i < _strategies.length; i++) {
            if (_strategies[i].active) totalTarget += _strategies[i].targetBps;
        }
        if (totalTarget > BPS) revert AllocationExceedsTotal(totalTarget);
        emit StrategyAllocationSet(strategy, targetBps, capBps, active);
    }

    function strategies() external view returns (StrategyAllocation[] memory) {
        return _strategies;
    }

    // ---- modules and closing -------------------------------------------------------------------

    function pause(uint8 module) external onlyOwner {
        if (module >= MODULE_COUNT) revert UnknownModule(module);
        if (_paused[module]) revert ModuleIsPaused(module);
        _paused[module] = true;
        emit ModulePaused(module);
    }

    function unpause(uint8 module) external onlyOwner {
        if (module >= MODULE_COUNT) revert UnknownModule(module);
        if (!_paused[module]) revert ModuleNotPaused(module);
        _paused[module] = false;
        emit ModuleUnpaused(module);
    }

    function isPaused(uint8 module) external view returns (bool) {
        if (module >= MODULE_COUNT) revert UnknownModule(module);
        return _paused[module];
    }

    function pausedModules() external view returns (bool subscriptions, bool redemptions, bool claims) {
        return (_paused[MODULE_SUBSCRIPTIONS], _paused[MODULE_REDEMPTIONS], _paused[MODULE_CLAIMS]);
    }

    /// @notice Closes the fund to new subscriptions for good. Redemptions and settlement continue so
    ///         that holders can exit.
    function close() external onlyOwner {
        if (closed) revert FundIsClosed();
        closed = true;
        emit FundClosed();
    }
}
